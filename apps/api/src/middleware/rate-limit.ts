import { ServiceError } from "@outcomes/core";
import { metrics } from "@outcomes/runtime";
import type { Context, MiddlewareHandler } from "hono";
import type { Redis } from "ioredis";
import type { AppEnv } from "../context.js";

/**
 * GCRA (generic cell rate algorithm) in one Redis round trip, on Redis's clock so every API process
 * agrees. A bucket of `limit` requests refills evenly over one second; unlike fixed windows it never
 * lets twice the limit through at a window edge.
 * Leaves {allowed, remaining, resetMs, retryAfterMs} in `result`.
 */
const GCRA = `
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

/**
 * The spin path's one round trip (KEYS: the spin bucket, the game's outcome list): the GCRA draw
 * above and, only when allowed, the LPOP of the next outcome, plus the list's length after it.
 * Returns {allowed, remaining, resetMs, retryAfterMs, item or false, length}. Both keys must live
 * on one Redis (they do not share a hash tag: not for Redis Cluster).
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

export type RateLimitBucket = "spin" | "default";

export interface RateLimitResult {
  allowed: boolean;
  remaining: number;
  resetMs: number;
  retryAfterMs: number;
}

type WithGcra = Redis & { gcra(key: string, limit: number): Promise<number[]> };

/**
 * The script as an ioredis command: sent by SHA (EVALSHA, with one EVAL when Redis does not know it
 * yet), not its whole text with every request.
 */
export function withGcra(redis: Redis): WithGcra {
  const client = redis as WithGcra;
  if (typeof client.gcra !== "function") redis.defineCommand("gcra", { numberOfKeys: 1, lua: GCRA_SCRIPT });
  return client;
}

async function takeToken(redis: Redis, key: string, limit: number): Promise<RateLimitResult> {
  const [allowed, remaining, resetMs, retryAfterMs] = await withGcra(redis).gcra(key, limit);
  return {
    allowed: allowed === 1,
    remaining: remaining ?? 0,
    resetMs: resetMs ?? 0,
    retryAfterMs: retryAfterMs ?? 0,
  };
}

/** `X-RateLimit-*` and the IETF `RateLimit-Policy` / `RateLimit` fields for the bucket drawn from. */
function setRateLimitHeaders(c: Context, bucket: RateLimitBucket, limit: number, result: RateLimitResult) {
  const resetSeconds = Math.ceil(result.resetMs / 1000);
  c.header("X-RateLimit-Limit", String(limit));
  c.header("X-RateLimit-Remaining", String(result.remaining));
  c.header("X-RateLimit-Reset", String(resetSeconds));
  c.header("RateLimit-Policy", `"${bucket}";q=${limit};w=1`);
  c.header("RateLimit", `"${bucket}";r=${result.remaining};t=${resetSeconds}`);
}

/**
 * The spin bucket, handed to the spin path so it draws in the same script as its LPOP
 * (SPIN_TAKE_SCRIPT): one Redis round trip per spin.
 */
export interface SpinGate {
  key: string;
  limit: number;
  /** Takes the draw's result: sets the headers, and throws KS-4291 when it was refused. */
  apply: (result: RateLimitResult) => void;
}

function enforce(c: Context, bucket: RateLimitBucket, limit: number, result: RateLimitResult): void {
  setRateLimitHeaders(c, bucket, limit, result);
  if (result.allowed) return;
  metrics.rateLimitRejections.inc({ bucket });
  throw new ServiceError(bucket === "spin" ? "KS-4291" : "KS-4292", {
    retryAfterSeconds: Math.max(1, Math.ceil(result.retryAfterMs / 1000)),
  });
}

async function draw(redis: Redis, bucket: RateLimitBucket, key: string, limit: number): Promise<RateLimitResult> {
  try {
    return await takeToken(redis, key, limit);
  } catch (error) {
    // Redis down: the request would fail anyway further on; a spin must say KS-5003 (not deducted).
    throw new ServiceError(bucket === "spin" ? "KS-5003" : "KS-5001", { cause: error });
  }
}

/** Draws the spin bucket on its own, for a spin that takes no outcome from a queue (a forced spin). */
export async function drawSpinGate(redis: Redis, gate: SpinGate): Promise<void> {
  gate.apply(await draw(redis, "spin", gate.key, gate.limit));
}

/** Spins draw from the spin bucket, every other partner request from the default one. */
export function rateLimit(bucketOf: (c: Context<AppEnv>) => RateLimitBucket): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const { deps, partner } = c.var;
    const bucket = bucketOf(c);
    const limit = bucket === "spin" ? deps.env.RATE_LIMIT_SPINS_PER_SECOND : deps.env.RATE_LIMIT_REQUESTS_PER_SECOND;
    const key = deps.keys.rateLimit(bucket, partner.partnerId, partner.environment);
    if (bucket === "default") {
      enforce(c, bucket, limit, await draw(deps.redis, bucket, key, limit));
      return next();
    }
    let drawn = false;
    c.set("spinGate", {
      key,
      limit,
      apply: (result) => {
        drawn = true;
        enforce(c, bucket, limit, result);
      },
    });
    await next();
    if (drawn) return;
    // Answered without taking an outcome (invalid body, game checks, an idempotent replay): the
    // request still draws from the bucket, and over the limit it is KS-4291, as if the bucket had
    // been checked first (those answers changed nothing).
    enforce(c, bucket, limit, await draw(deps.redis, bucket, key, limit));
  };
}
