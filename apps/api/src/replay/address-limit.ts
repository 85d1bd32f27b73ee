import type { RedisClient } from "@outcomes/queue";
import { type Draw, drawAt, GCRA_FUNCTION } from "../ratelimit/gcra.js";

/**
 * The partner buckets' GCRA (ratelimit/gcra.ts, on Redis's clock, so every API process shares a
 * count) over a window of `ARGV[2]` seconds instead of one: a bucket of `limit` requests that
 * refills evenly over the window, so a minute's allowance can be used at once (a person opening
 * several links), then one request per window / limit.
 */
export const WINDOWED_GCRA_SCRIPT = `${GCRA_FUNCTION}
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
return {gcra(KEYS[1], tonumber(ARGV[1]), now, tonumber(ARGV[2]) * 1000000)}`;

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
  return drawAt(await withWindowedGcra(redis).windowedGcra(key, perMinute, 60), 0);
}
