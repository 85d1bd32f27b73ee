import { ServiceError } from "@outcomes/core";
import type { RedisClient } from "@outcomes/queue";
import { metrics } from "@outcomes/runtime";
import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "../context.js";
import { routeDeclares } from "../router.js";
import { type RateLimitResult, type SpinGate, takeToken } from "./gcra.js";

export type RateLimitBucket = "spin" | "default";

/** `X-RateLimit-*` and the IETF `RateLimit-Policy` / `RateLimit` fields for the bucket drawn from. */
function setRateLimitHeaders(c: Context, bucket: RateLimitBucket, limit: number, result: RateLimitResult) {
  const resetSeconds = Math.ceil(result.resetMs / 1000);
  c.header("X-RateLimit-Limit", String(limit));
  c.header("X-RateLimit-Remaining", String(result.remaining));
  c.header("X-RateLimit-Reset", String(resetSeconds));
  c.header("RateLimit-Policy", `"${bucket}";q=${limit};w=1`);
  c.header("RateLimit", `"${bucket}";r=${result.remaining};t=${resetSeconds}`);
}

function enforce(c: Context, bucket: RateLimitBucket, limit: number, result: RateLimitResult): void {
  setRateLimitHeaders(c, bucket, limit, result);
  if (result.allowed) return;
  metrics.rateLimitRejections.inc({ bucket });
  throw new ServiceError(bucket === "spin" ? "KS-4291" : "KS-4292", {
    retryAfterSeconds: Math.max(1, Math.ceil(result.retryAfterMs / 1000)),
  });
}

async function draw(redis: RedisClient, bucket: RateLimitBucket, key: string, limit: number): Promise<RateLimitResult> {
  try {
    return await takeToken(redis, key, limit);
  } catch (error) {
    // Redis down: the request would fail anyway further on; a spin must say KS-5003 (not deducted).
    throw new ServiceError(bucket === "spin" ? "KS-5003" : "KS-5001", { cause: error });
  }
}

/** Draws the spin bucket on its own, for a spin that takes no outcome from a queue (a forced spin). */
export async function drawSpinGate(redis: RedisClient, gate: SpinGate): Promise<void> {
  gate.apply(await draw(redis, "spin", gate.key, gate.limit));
}

/**
 * Declared in a route's `middleware` (POST /spins): the route draws from the spin bucket, with its
 * outcome's LPOP, instead of the default one.
 */
export const spinBucket: MiddlewareHandler<AppEnv> = (_c, next) => next();

/** Routes declaring `spinBucket` draw from the spin bucket, every other partner request from the default. */
export function rateLimit(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const { deps, partner } = c.var;
    const bucket: RateLimitBucket = routeDeclares(c, spinBucket) ? "spin" : "default";
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
