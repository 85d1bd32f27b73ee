import type { RedisClient, RedisKeys } from "./redis.js";

/**
 * The set of API keys known to exist (`issuedApiKeys`): each key's SHA-256 hex, as `api_keys.key_hash`
 * stores it, scored with its expiry (epoch ms). A key listed and not expired skips the per-address
 * count of unknown-key look-ups (apps/api auth/failed-auth-throttle.ts), so minted keys from a
 * shared address cannot hold up partners' keys; Postgres still verifies it like any other.
 * Listing only ever spares a count: a key missing from the set (issued by a release that does not
 * keep it, or before it existed) is counted as before, and a revoked key left in it is refused by
 * Postgres as before. Kept by the operator API and the CLI as they issue, rotate and revoke keys, by
 * the API as it finds a live key not listed, and made whole from Postgres by the key-expiry role.
 */
export interface IssuedKey {
  keyHash: string;
  expiresAt: Date;
}

/** Keys that now exist until their expiry (issued, or rotated: the old key's shortened life) and keys that no longer do. */
export interface IssuedKeyChange {
  live?: readonly IssuedKey[];
  gone?: readonly string[];
}

export async function updateIssuedKeys(redis: RedisClient, keys: RedisKeys, change: IssuedKeyChange): Promise<void> {
  const live = change.live ?? [];
  const gone = change.gone ?? [];
  if (live.length === 0 && gone.length === 0) return;
  // One key, so one MULTI on a cluster too.
  const multi = redis.multi();
  if (live.length > 0) multi.zadd(keys.issuedApiKeys, ...live.flatMap((key) => [key.expiresAt.getTime(), key.keyHash]));
  if (gone.length > 0) multi.zrem(keys.issuedApiKeys, ...gone);
  const replies = await multi.exec();
  // EXEC answers each command's error beside the others' results rather than failing.
  const failed = replies?.find(([error]) => error)?.[0];
  if (failed) throw failed;
}

/** Whether the key with this hash is listed and not expired at `now`. */
export async function isIssuedKey(redis: RedisClient, keys: RedisKeys, keyHash: string, now: number): Promise<boolean> {
  const expiresAt = await redis.zscore(keys.issuedApiKeys, keyHash);
  return expiresAt !== null && Number(expiresAt) > now;
}

/** Drops the keys whose expiry has passed; they skip nothing already, this keeps the set to live keys. */
export async function dropExpiredIssuedKeys(redis: RedisClient, keys: RedisKeys, now: number): Promise<number> {
  return redis.zremrangebyscore(keys.issuedApiKeys, "-inf", now);
}

/** One page of the listed hashes (ZSCAN: a listing changed meanwhile may repeat or miss an entry). */
export async function scanIssuedKeys(
  redis: RedisClient,
  keys: RedisKeys,
  cursor: string,
  count: number,
): Promise<{ cursor: string; keyHashes: string[] }> {
  const [next, flat] = await redis.zscan(keys.issuedApiKeys, cursor, "COUNT", count);
  // ZSCAN answers member, score, member, score, …
  return { cursor: next, keyHashes: flat.filter((_, index) => index % 2 === 0) };
}
