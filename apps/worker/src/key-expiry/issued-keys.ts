import { type Database, liveApiKeysAfter, liveKeyHashesAmong } from "@outcomes/db";
import {
  dropExpiredIssuedKeys,
  type RedisClient,
  type RedisKeys,
  scanIssuedKeys,
  updateIssuedKeys,
} from "@outcomes/queue";

/** Keys read from Postgres, and hashes scanned from Redis, per step: memory stays flat however many keys. */
const PAGE = 1_000;

/**
 * Makes the issued-key set (packages/queue issued-keys.ts) match Postgres: lists every live key
 * (keys issued by a release that does not keep the set included), then unlists every listed hash
 * Postgres has no live key for (revoked, expired, or not there). A key issued meanwhile is listed
 * by its issuer after the commit, and a hash is unlisted only if Postgres, asked after the scan
 * found it, has no live key for it, so such a key stays listed. A key revoked while its page is
 * being listed may be listed again: the next run unlists it, and Postgres refuses it meanwhile.
 */
export async function syncIssuedKeys(
  { db, redis, keys }: { db: Database; redis: RedisClient; keys: RedisKeys },
  now = new Date(),
): Promise<{ listed: number; unlisted: number }> {
  let unlisted = await dropExpiredIssuedKeys(redis, keys, now.getTime());
  let listed = 0;
  for (let afterId = ""; ; ) {
    const page = await liveApiKeysAfter(db, afterId, PAGE, now);
    await updateIssuedKeys(redis, keys, { live: page });
    listed += page.length;
    const last = page.at(-1);
    if (!last || page.length < PAGE) break;
    afterId = last.id;
  }
  let cursor = "0";
  do {
    const scanned = await scanIssuedKeys(redis, keys, cursor, PAGE);
    const live = await liveKeyHashesAmong(db, scanned.keyHashes, now);
    const gone = scanned.keyHashes.filter((keyHash) => !live.has(keyHash));
    await updateIssuedKeys(redis, keys, { gone });
    unlisted += gone.length;
    cursor = scanned.cursor;
  } while (cursor !== "0");
  return { listed, unlisted };
}
