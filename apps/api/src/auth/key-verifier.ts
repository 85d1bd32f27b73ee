import { type Environment, hashApiKey, parseApiKey, ServiceError } from "@outcomes/core";
import { apiKeys, type Database, partners } from "@outcomes/db";
import { eq } from "drizzle-orm";
import type { PartnerAuth } from "../context.js";

interface KeyRecord {
  apiKeyId: string;
  partnerId: string;
  environment: Environment;
  expiresAt: number;
  revoked: boolean;
  partnerActive: boolean;
}

/** Cached records live at most this long, so a missed invalidation still takes effect within 1 s. */
const CACHE_TTL_MS = 1000;
/** `lastUsedAt` is written at most this often per key and process (not on every request). */
const LAST_USED_WRITE_INTERVAL_MS = 60_000;

/**
 * Verifies `X-API-Key` values: checksum first (a mistyped key never reaches the store), then the
 * SHA-256 hash against Postgres through a short in-process cache that `invalidate` clears
 * (every API process calls it when a key or partner changes, over Redis pub/sub).
 */
export class KeyVerifier {
  private readonly cache = new Map<string, { record: KeyRecord | null; loadedAt: number }>();
  private readonly lastUsedWrites = new Map<string, number>();

  constructor(
    private readonly db: Database,
    private readonly allowedEnvironments: readonly Environment[],
    private readonly onBackgroundError: (error: unknown) => void = () => {},
  ) {}

  async verify(presented: string | undefined, now = Date.now()): Promise<PartnerAuth> {
    if (!presented) throw new ServiceError("KS-4001");
    const environment = parseApiKey(presented);
    if (!environment || !this.allowedEnvironments.includes(environment)) throw new ServiceError("KS-4002");
    const hash = hashApiKey(presented);
    const record = await this.load(hash, now);
    if (!record) throw new ServiceError("KS-4002");
    if (record.revoked) throw new ServiceError("KS-4003");
    if (record.expiresAt <= now) throw new ServiceError("KS-4004");
    if (!record.partnerActive) throw new ServiceError("KS-4005");
    this.touch(record.apiKeyId, now);
    return { partnerId: record.partnerId, environment: record.environment, apiKeyId: record.apiKeyId };
  }

  /** Drops every cached record (keys and partners change rarely; a full clear is simplest and safe). */
  invalidate(): void {
    this.cache.clear();
  }

  private async load(hash: string, now: number): Promise<KeyRecord | null> {
    const cached = this.cache.get(hash);
    if (cached && now - cached.loadedAt < CACHE_TTL_MS) return cached.record;
    let rows: Array<{
      apiKeyId: string;
      partnerId: string;
      environment: Environment;
      expiresAt: Date;
      revokedAt: Date | null;
      partnerActive: boolean;
    }>;
    try {
      rows = await this.db
        .select({
          apiKeyId: apiKeys.id,
          partnerId: apiKeys.partnerId,
          environment: apiKeys.environment,
          expiresAt: apiKeys.expiresAt,
          revokedAt: apiKeys.revokedAt,
          partnerActive: partners.isActive,
        })
        .from(apiKeys)
        .innerJoin(partners, eq(partners.id, apiKeys.partnerId))
        .where(eq(apiKeys.keyHash, hash))
        .limit(1);
    } catch (error) {
      throw new ServiceError("KS-5004", { cause: error });
    }
    const row = rows[0];
    const record: KeyRecord | null = row
      ? {
          apiKeyId: row.apiKeyId,
          partnerId: row.partnerId,
          environment: row.environment,
          expiresAt: row.expiresAt.getTime(),
          revoked: row.revokedAt !== null && row.revokedAt.getTime() <= now,
          partnerActive: row.partnerActive,
        }
      : null;
    this.cache.set(hash, { record, loadedAt: now });
    return record;
  }

  private touch(apiKeyId: string, now: number): void {
    const last = this.lastUsedWrites.get(apiKeyId) ?? 0;
    if (now - last < LAST_USED_WRITE_INTERVAL_MS) return;
    this.lastUsedWrites.set(apiKeyId, now);
    this.db
      .update(apiKeys)
      .set({ lastUsedAt: new Date(now) })
      .where(eq(apiKeys.id, apiKeyId))
      .catch(this.onBackgroundError);
  }
}
