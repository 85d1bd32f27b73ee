import {
  couldBeId,
  DEFAULT_ROTATION_OVERLAP_HOURS,
  defaultKeyExpiry,
  type Environment,
  ErrorCode,
  type ErrorDetail,
  expiryProblem,
  generateApiKey,
  newId,
  overlapProblem,
  rotatedKeyExpiry,
  ServiceError,
} from "@outcomes/core";
import { and, asc, count, desc, eq, gt, inArray, isNull, sql } from "drizzle-orm";
import type { Database, Executor } from "../client.js";
import { apiKeys } from "../schema/api-keys.js";
import { partners } from "../schema/partners.js";
import type { Paged, PageWindow } from "./paging.js";
import { requirePartner } from "./partners.js";
import { PARTNER_PROTECTED_SQL } from "./player-protections.js";

export type ApiKeyRecord = typeof apiKeys.$inferSelect;

export interface IssuedApiKey {
  record: ApiKeyRecord;
  key: string;
}

function invalid(problem: ErrorDetail | null): void {
  if (problem) throw new ServiceError(ErrorCode.InvalidRequest, { details: [problem] });
}

/** Unexpected failures of issue/rotate are KS-5008; the codes of the rules pass through. */
async function issuing<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof ServiceError) throw error;
    throw new ServiceError(ErrorCode.KeyIssueFailed, { cause: error });
  }
}

async function insertKey(tx: Executor, partnerId: string, environment: Environment, expiresAt: Date, now: Date) {
  const generated = generateApiKey(environment);
  const [record] = await tx
    .insert(apiKeys)
    .values({
      id: newId("key"),
      partnerId,
      environment,
      keyHash: generated.hash,
      prefix: generated.displayPrefix,
      expiresAt,
      createdAt: now,
    })
    .returning();
  return { record: record!, key: generated.key };
}

/**
 * Issues a key (default lifetime 365 days). Unknown partner 404 KS-4209, deactivated 403 KS-4210,
 * an expiry not in the future 400 KS-4101.
 */
export async function issueApiKey(
  db: Database,
  input: { partnerId: string; environment: Environment; expiresAt?: Date | undefined },
  now = new Date(),
): Promise<IssuedApiKey> {
  if (input.expiresAt) invalid(expiryProblem(input.expiresAt, now));
  return issuing(() =>
    db.transaction(async (tx) => {
      const partner = await requirePartner(tx, input.partnerId, "share");
      if (!partner.isActive) throw new ServiceError(ErrorCode.PartnerInactive);
      return insertKey(tx, partner.id, input.environment, input.expiresAt ?? defaultKeyExpiry(now), now);
    }),
  );
}

export async function listApiKeys(db: Database, partnerId: string, page: PageWindow): Promise<Paged<ApiKeyRecord>> {
  await requirePartner(db, partnerId);
  const [rows, totals] = await Promise.all([
    db
      .select()
      .from(apiKeys)
      .where(eq(apiKeys.partnerId, partnerId))
      .orderBy(desc(apiKeys.createdAt), desc(apiKeys.id))
      .limit(page.limit)
      .offset(page.offset),
    db.select({ total: count() }).from(apiKeys).where(eq(apiKeys.partnerId, partnerId)),
  ]);
  return { rows, total: totals[0]?.total ?? 0 };
}

/** The partner's key, locked for update: unknown partner KS-4209, unknown key KS-4212, another's KS-4213. */
async function lockPartnerKey(tx: Executor, partnerId: string, keyId: string) {
  const partner = await requirePartner(tx, partnerId, "share");
  if (!couldBeId(keyId)) throw new ServiceError(ErrorCode.ApiKeyNotFound);
  const [key] = await tx.select().from(apiKeys).where(eq(apiKeys.id, keyId)).for("update");
  if (!key) throw new ServiceError(ErrorCode.ApiKeyNotFound);
  if (key.partnerId !== partnerId) throw new ServiceError(ErrorCode.ApiKeyNotOwned);
  return { partner, key };
}

/** Revokes at once; revoking again keeps the first `revokedAt` and succeeds. */
export async function revokeApiKey(db: Database, partnerId: string, keyId: string, now = new Date()) {
  return db.transaction(async (tx) => {
    const { key } = await lockPartnerKey(tx, partnerId, keyId);
    if (key.revokedAt) return key;
    const [revoked] = await tx.update(apiKeys).set({ revokedAt: now }).where(eq(apiKeys.id, keyId)).returning();
    return revoked!;
  });
}

/**
 * Issues a new key of the same environment and shortens the old one's life to the overlap
 * (default 24 h), never lengthening it. A revoked key cannot be rotated (issue a new one instead).
 */
export async function rotateApiKey(
  db: Database,
  input: { partnerId: string; keyId: string; overlapHours?: number | undefined; expiresAt?: Date | undefined },
  now = new Date(),
): Promise<IssuedApiKey & { previous: ApiKeyRecord }> {
  const overlapHours = input.overlapHours ?? DEFAULT_ROTATION_OVERLAP_HOURS;
  invalid(overlapProblem(overlapHours));
  if (input.expiresAt) invalid(expiryProblem(input.expiresAt, now));
  return issuing(() =>
    db.transaction(async (tx) => {
      const { partner, key } = await lockPartnerKey(tx, input.partnerId, input.keyId);
      if (!partner.isActive) throw new ServiceError(ErrorCode.PartnerInactive);
      if (key.revokedAt) {
        throw new ServiceError(ErrorCode.InvalidRequest, {
          message: "A revoked key cannot be rotated; issue a new key instead",
        });
      }
      const issued = await insertKey(tx, partner.id, key.environment, input.expiresAt ?? defaultKeyExpiry(now), now);
      const [previous] = await tx
        .update(apiKeys)
        .set({ expiresAt: rotatedKeyExpiry(key.expiresAt, now, overlapHours), rotatedToKeyId: issued.record.id })
        .where(eq(apiKeys.id, key.id))
        .returning();
      return { ...issued, previous: previous! };
    }),
  );
}

/** A key that is neither revoked nor expired at `now`. */
const liveAt = (now: Date) => and(isNull(apiKeys.revokedAt), gt(apiKeys.expiresAt, now));

/** Live keys with an id after `afterId`, in id order, at most `limit`: all of them, page by page. */
export function liveApiKeysAfter(db: Database, afterId: string, limit: number, now = new Date()) {
  return db
    .select({ id: apiKeys.id, keyHash: apiKeys.keyHash, expiresAt: apiKeys.expiresAt })
    .from(apiKeys)
    .where(and(liveAt(now), gt(apiKeys.id, afterId)))
    .orderBy(asc(apiKeys.id))
    .limit(limit);
}

/** Which of these hashes are of live keys. */
export async function liveKeyHashesAmong(db: Database, keyHashes: string[], now = new Date()): Promise<Set<string>> {
  if (keyHashes.length === 0) return new Set();
  const rows = await db
    .select({ keyHash: apiKeys.keyHash })
    .from(apiKeys)
    .where(and(liveAt(now), inArray(apiKeys.keyHash, keyHashes)));
  return new Set(rows.map((row) => row.keyHash));
}

/** A key as authentication reads it, with whether its partner is active. */
export interface KeyForAuth {
  apiKeyId: string;
  partnerId: string;
  environment: Environment;
  expiresAt: Date;
  revokedAt: Date | null;
  partnerActive: boolean;
  /** Whether the partner's spins need the player-protection checks (PARTNER_PROTECTED_SQL). */
  partnerChecked: boolean;
}

/** The key with this hash, or null (the API keeps the answer a second: auth/key-verifier.ts). */
export async function findKeyForAuth(db: Executor, keyHash: string): Promise<KeyForAuth | null> {
  const [row] = await db
    .select({
      apiKeyId: apiKeys.id,
      partnerId: apiKeys.partnerId,
      environment: apiKeys.environment,
      expiresAt: apiKeys.expiresAt,
      revokedAt: apiKeys.revokedAt,
      partnerActive: partners.isActive,
      partnerChecked: sql<boolean>`${sql.raw(PARTNER_PROTECTED_SQL)}`,
    })
    .from(apiKeys)
    .innerJoin(partners, eq(partners.id, apiKeys.partnerId))
    .where(eq(apiKeys.keyHash, keyHash))
    .limit(1);
  return row ?? null;
}

/** Records that the key was used at `at` (`lastUsedAt`). */
export async function recordKeyUse(db: Executor, apiKeyId: string, at: Date): Promise<void> {
  await db.update(apiKeys).set({ lastUsedAt: at }).where(eq(apiKeys.id, apiKeyId));
}
