import type { RedisClient } from "@outcomes/queue";

/**
 * GCRA (generic cell rate algorithm) in one Redis round trip, on Redis's clock so every API process
 * agrees. A bucket of `limit` requests refills evenly over one second; unlike fixed windows it never
 * lets twice the limit through at a window edge.
 * Leaves {allowed, remaining, resetMs, retryAfterMs} in `result`, and `refused`.
 */
export const GCRA = `
local key = KEYS[1]
local limit = tonumber(ARGV[1])
local interval = 1000000 / limit
local burst = 1000000
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local tat = tonumber(redis.call('GET', key) or now)
if tat < now then tat = now end
local newTat = tat + interval
local allowAt = newTat - burst
local refused = now < allowAt
local result
if refused then
  result = {0, 0, math.ceil((tat - now) / 1000), math.ceil((allowAt - now) / 1000)}
else
  redis.call('SET', key, string.format('%d', newTat), 'PX', math.ceil((newTat - now) / 1000) + 1)
  result = {1, math.floor((now - allowAt) / interval), math.ceil((newTat - now) / 1000), 0}
end
`;
const GCRA_SCRIPT = `${GCRA}
return result`;

/** One draw from a bucket. */
export interface Draw {
  allowed: boolean;
  remaining: number;
  resetMs: number;
  retryAfterMs: number;
}

/** The first four numbers of a GCRA script's reply. */
export function drawOf(reply: readonly unknown[]): Draw {
  const [allowed, remaining, resetMs, retryAfterMs] = reply as (number | undefined)[];
  return { allowed: allowed === 1, remaining: remaining ?? 0, resetMs: resetMs ?? 0, retryAfterMs: retryAfterMs ?? 0 };
}

type WithGcra = RedisClient & { gcra(key: string, limit: number): Promise<number[]> };

/**
 * The script as an ioredis command: sent by SHA (EVALSHA, with one EVAL when Redis does not know it
 * yet), not its whole text with every request.
 */
export function withGcra(redis: RedisClient): WithGcra {
  const client = redis as WithGcra;
  if (typeof client.gcra !== "function") redis.defineCommand("gcra", { numberOfKeys: 1, lua: GCRA_SCRIPT });
  return client;
}

/** Draws one request from the bucket at `key`. */
export async function drawToken(redis: RedisClient, key: string, limit: number): Promise<Draw> {
  return drawOf(await withGcra(redis).gcra(key, limit));
}
