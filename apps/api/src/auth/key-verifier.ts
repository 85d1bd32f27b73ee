import { type Environment, ErrorCode, hashApiKey, parseApiKey, ServiceError } from "@outcomes/core";
import { type Database, findKeyForAuth, type KeyForAuth, recordKeyUse } from "@outcomes/db";
import { setBounded } from "../bounded-map.js";

/** The authenticated caller of a partner route. */
export interface PartnerAuth {
  partnerId: string;
  environment: Environment;
  apiKeyId: string;
  /**
   * The partner's spins go through the player-protection checks (CONTRACT §16): its default
   * jurisdiction is not NONE, or a player of its has a protection. Absent or false: the spin path's
   * statement is the plain one, which reads no protection table.
   */
  checked?: boolean;
}

interface KeyRecord {
  apiKeyId: string;
  partnerId: string;
  environment: Environment;
  expiresAt: number;
  revoked: boolean;
  partnerActive: boolean;
  partnerChecked: boolean;
}

/** Cached records live at most this long, so a missed invalidation still takes effect within 1 s. */
const CACHE_TTL_MS = 1000;
/** `lastUsedAt` is written at most this often per key and process (not on every request). */
const LAST_USED_WRITE_INTERVAL_MS = 60_000;
/** Keys found in Postgres, remembered per process (about 250 bytes each). */
const MAX_KNOWN_KEYS = 10_000;
/**
 * Hashes found nowhere, cached so a client repeating one stale key costs one look-up a second.
 * Anyone can mint such keys, so the bound is what keeps their memory flat.
 */
export const MAX_UNKNOWN_KEYS = 1_000;

interface CacheEntry<T> {
  record: T;
  loadedAt: number;
  /** `invalidate` bumps the verifier's generation: entries of an older one are stale. */
  generation: number;
}

/**
 * Counts, per client address, the look-ups of keys this process has never found, but for keys
 * known to exist (auth/failed-auth-throttle.ts).
 */
export interface LookUpGuard {
  /** Before a look-up of the key with this hash: counts it, or throws when the client may not cause another one now. */
  admit(keyHash: string): Promise<void>;
  /**
   * The admitted look-up found the key, usable until `liveUntil` (epoch ms; null: revoked or
   * expired): it does not count against the client.
   */
  found(liveUntil: number | null): Promise<void>;
  /** The admitted look-up failed (the store): it does not count against the client. */
  release(): Promise<void>;
}

/**
 * Verifies `X-API-Key` values: checksum first (a mistyped key never reaches the store), then the
 * SHA-256 hash against Postgres through a short in-process cache that `invalidate` clears
 * (every API process calls it when a key or partner changes, over Redis pub/sub).
 * Known and unknown hashes are cached apart, each bounded, so a flood of minted keys can neither
 * grow memory nor push the partners' keys out.
 */
export class KeyVerifier {
  private readonly known = new Map<string, CacheEntry<KeyRecord>>();
  private readonly unknown = new Map<string, CacheEntry<null>>();
  private generation = 0;
  private readonly lastUsedWrites = new Map<string, number>();
  /** Look-ups in flight, by hash: concurrent requests with one key share one (and one guard admission). */
  private readonly loading = new Map<string, Promise<KeyRecord | null>>();

  constructor(
    private readonly db: Database,
    private readonly allowedEnvironments: readonly Environment[],
    private readonly onBackgroundError: (error: unknown) => void = () => {},
  ) {}

  /**
   * `guard` admits each look-up of a key this process has not found before (unknown ones included,
   * even while cached); keys it has found keep working whatever the guard says.
   */
  async verify(presented: string | undefined, guard?: LookUpGuard, now = Date.now()): Promise<PartnerAuth> {
    if (!presented) throw new ServiceError(ErrorCode.MissingApiKey);
    const environment = parseApiKey(presented);
    if (!environment || !this.allowedEnvironments.includes(environment))
      throw new ServiceError(ErrorCode.InvalidApiKey);
    const hash = hashApiKey(presented);
    const record = await this.load(hash, now, guard);
    if (!record) throw new ServiceError(ErrorCode.InvalidApiKey);
    if (record.revoked) throw new ServiceError(ErrorCode.ApiKeyRevoked);
    if (record.expiresAt <= now) throw new ServiceError(ErrorCode.ApiKeyExpired);
    if (!record.partnerActive) throw new ServiceError(ErrorCode.PartnerDeactivated);
    this.touch(record.apiKeyId, now);
    const auth: PartnerAuth = {
      partnerId: record.partnerId,
      environment: record.environment,
      apiKeyId: record.apiKeyId,
    };
    if (record.partnerChecked) auth.checked = true;
    return auth;
  }

  /**
   * Makes every cached record stale (keys and partners change rarely; all at once is simplest and
   * safe). Known hashes stay known: a key, once found, exists for good.
   */
  invalidate(): void {
    this.generation += 1;
  }

  /** How many hashes are cached, found and not found (for tests and debugging). */
  cachedKeys(): { known: number; unknown: number } {
    return { known: this.known.size, unknown: this.unknown.size };
  }

  private fresh(entry: CacheEntry<unknown> | undefined, now: number): boolean {
    return entry !== undefined && entry.generation === this.generation && now - entry.loadedAt < CACHE_TTL_MS;
  }

  /**
   * The key's record, from the cache or one look-up shared by every request with that key arriving
   * meanwhile: a burst with a valid key on a fresh process (a deploy) costs one query and counts once
   * against its client's address, instead of being refused past the guard's allowance.
   */
  private async load(hash: string, now: number, guard: LookUpGuard | undefined): Promise<KeyRecord | null> {
    const known = this.known.get(hash);
    if (known && this.fresh(known, now)) return known.record;
    const inFlight = this.loading.get(hash);
    if (inFlight) return inFlight;
    const loading = this.read(hash, known, now, guard);
    this.loading.set(hash, loading);
    try {
      return await loading;
    } finally {
      this.loading.delete(hash);
    }
  }

  private async read(
    hash: string,
    known: CacheEntry<KeyRecord> | undefined,
    now: number,
    guard: LookUpGuard | undefined,
  ): Promise<KeyRecord | null> {
    if (!known) {
      await guard?.admit(hash);
      if (this.fresh(this.unknown.get(hash), now)) return null;
    }
    // Taken before the query: a record read across an `invalidate` is stored already stale.
    const generation = this.generation;
    let row: KeyForAuth | null;
    try {
      row = await findKeyForAuth(this.db, hash);
    } catch (error) {
      if (!known) await guard?.release();
      throw new ServiceError(ErrorCode.AuthStoreFailed, { cause: error });
    }
    if (!row) {
      this.known.delete(hash);
      setBounded(this.unknown, hash, { record: null, loadedAt: now, generation }, MAX_UNKNOWN_KEYS);
      return null;
    }
    const record: KeyRecord = {
      apiKeyId: row.apiKeyId,
      partnerId: row.partnerId,
      environment: row.environment,
      expiresAt: row.expiresAt.getTime(),
      revoked: row.revokedAt !== null && row.revokedAt.getTime() <= now,
      partnerActive: row.partnerActive,
      partnerChecked: row.partnerChecked,
    };
    if (!known) await guard?.found(record.revoked || record.expiresAt <= now ? null : record.expiresAt);
    this.unknown.delete(hash);
    setBounded(this.known, hash, { record, loadedAt: now, generation }, MAX_KNOWN_KEYS);
    return record;
  }

  private touch(apiKeyId: string, now: number): void {
    const last = this.lastUsedWrites.get(apiKeyId) ?? 0;
    if (now - last < LAST_USED_WRITE_INTERVAL_MS) return;
    setBounded(this.lastUsedWrites, apiKeyId, now, MAX_KNOWN_KEYS);
    recordKeyUse(this.db, apiKeyId, new Date(now)).catch(this.onBackgroundError);
  }
}
