import type { RedisClient } from "@outcomes/queue";
import type { BucketDraw } from "./buckets.js";
import { drawOf, GCRA } from "./gcra.js";

/**
 * The spin path's one round trip (KEYS: the spin bucket, the game's outcome list): the GCRA draw
 * and, only when allowed, the LPOP of the next outcome, plus the list's length after it.
 * Returns {allowed, remaining, resetMs, retryAfterMs, item or false, length}. Both keys carry the
 * partner and environment's hash tag (redisKeys), so on a Redis Cluster they are in one slot.
 */
export const SPIN_TAKE_SCRIPT = `${GCRA}
if refused then
  result[5] = false
  result[6] = redis.call('LLEN', KEYS[2])
else
  result[5] = redis.call('LPOP', KEYS[2])
  result[6] = redis.call('LLEN', KEYS[2])
end
return result`;

type WithSpinTake = RedisClient & {
  spinTake(
    bucketKey: string,
    queue: string,
    limit: number,
  ): Promise<[number, number, number, number, string | null, number]>;
};

/** SPIN_TAKE_SCRIPT as an ioredis command: sent by SHA (EVALSHA). */
export function withSpinTake(redis: RedisClient): WithSpinTake {
  const client = redis as WithSpinTake;
  if (typeof client.spinTake !== "function")
    redis.defineCommand("spinTake", { numberOfKeys: 2, lua: SPIN_TAKE_SCRIPT });
  return client;
}

/**
 * Draws the spin bucket and, when it allows, takes the list's next item: the draw is left in
 * `bucket.draw` (plain data, for the route to answer with), the item (null when refused or empty)
 * and the list's length after it are returned.
 */
export async function drawAndTake(
  redis: RedisClient,
  bucket: BucketDraw,
  queue: string,
): Promise<{ raw: string | null; remaining: number }> {
  const reply = await withSpinTake(redis).spinTake(bucket.key, queue, bucket.limit);
  bucket.draw = drawOf(reply);
  return { raw: reply[4] || null, remaining: reply[5] };
}
