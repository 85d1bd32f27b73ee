import { ErrorCode, ServiceError } from "@outcomes/core";
import type { RedisClient, RedisKeys } from "@outcomes/queue";
import { type Env, metrics } from "@outcomes/runtime";
import { type Draw, drawToken } from "./gcra.js";

/** CONTRACT §9: spins draw from `spin`, every other partner request from `default`. */
export type Bucket = "spin" | "default";

/** A request's bucket, and its draw once made (one per request). Plain data, shared by the layers. */
export interface BucketDraw {
  bucket: Bucket;
  key: string;
  limit: number;
  draw: Draw | null;
}

export function bucketDraw(
  env: Pick<Env, "RATE_LIMIT_SPINS_PER_SECOND" | "RATE_LIMIT_REQUESTS_PER_SECOND">,
  keys: RedisKeys,
  partner: { partnerId: string; environment: string },
  bucket: Bucket,
): BucketDraw {
  const limit = bucket === "spin" ? env.RATE_LIMIT_SPINS_PER_SECOND : env.RATE_LIMIT_REQUESTS_PER_SECOND;
  return { bucket, key: keys.rateLimit(bucket, partner.partnerId, partner.environment), limit, draw: null };
}

/** Draws from the bucket unless the request already did (with its outcome's LPOP). */
export async function drawOnce(redis: RedisClient, bucket: BucketDraw): Promise<Draw> {
  if (bucket.draw) return bucket.draw;
  try {
    bucket.draw = await drawToken(redis, bucket.key, bucket.limit);
  } catch (error) {
    // Redis down: the request would fail anyway further on; a spin must say KS-5003 (not deducted).
    throw new ServiceError(bucket.bucket === "spin" ? ErrorCode.SpinFailed : ErrorCode.Internal, { cause: error });
  }
  return bucket.draw;
}

/** `X-RateLimit-*` and the IETF `RateLimit-Policy` / `RateLimit` fields for the bucket drawn from. */
export function rateLimitHeaders({ bucket, limit }: BucketDraw, draw: Draw): Record<string, string> {
  const resetSeconds = String(Math.ceil(draw.resetMs / 1000));
  return {
    "X-RateLimit-Limit": String(limit),
    "X-RateLimit-Remaining": String(draw.remaining),
    "X-RateLimit-Reset": resetSeconds,
    "RateLimit-Policy": `"${bucket}";q=${limit};w=1`,
    RateLimit: `"${bucket}";r=${draw.remaining};t=${resetSeconds}`,
  };
}

/** The answer to a refused draw: KS-4291 for spins, KS-4292 otherwise, with `Retry-After`. */
export function refusal({ bucket }: BucketDraw, draw: Draw): ServiceError {
  metrics.rateLimitRejections.inc({ bucket });
  return new ServiceError(bucket === "spin" ? ErrorCode.SpinRateLimited : ErrorCode.RateLimited, {
    retryAfterSeconds: Math.max(1, Math.ceil(draw.retryAfterMs / 1000)),
  });
}
