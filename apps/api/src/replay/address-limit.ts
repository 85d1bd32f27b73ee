import type { RedisClient } from "@outcomes/queue";
import { type Draw, drawOf, GCRA } from "../ratelimit/gcra.js";

/**
 * The partner buckets' GCRA (ratelimit/gcra.ts, on Redis's clock, so every API process shares a
 * count) over a window of `ARGV[2]` seconds instead of one: a bucket of `limit` requests that
 * refills evenly over the window, so a minute's allowance can be used at once (a person opening
 * several links), then one request per window / limit.
 */
const ONE_SECOND = "local interval = 1000000 / limit\nlocal burst = 1000000";
if (!GCRA.includes(ONE_SECOND)) throw new Error("the GCRA script no longer declares its one-second window");
export const WINDOWED_GCRA_SCRIPT = `${GCRA.replace(
  ONE_SECOND,
  "local burst = tonumber(ARGV[2]) * 1000000\nlocal interval = burst / limit",
)}
return result`;

type WithWindowedGcra = RedisClient & {
  windowedGcra(key: string, limit: number, windowSeconds: number): Promise<number[]>;
};

/** The script as an ioredis command (EVALSHA); defined before the first request (see build-api.ts). */
export function withWindowedGcra(redis: RedisClient): WithWindowedGcra {
  const client = redis as WithWindowedGcra;
  if (typeof client.windowedGcra !== "function") {
    redis.defineCommand("windowedGcra", { numberOfKeys: 1, lua: WINDOWED_GCRA_SCRIPT });
  }
  return client;
}

/** One request from a client's bucket of `perMinute` requests a minute. */
export async function drawPerMinute(redis: RedisClient, key: string, perMinute: number): Promise<Draw> {
  return drawOf(await withWindowedGcra(redis).windowedGcra(key, perMinute, 60));
}
