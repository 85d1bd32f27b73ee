import { ErrorCode, ServiceError } from "@outcomes/core";
import type { RedisKeys } from "@outcomes/queue";
import { metrics } from "@outcomes/runtime";
import type { DrawRequest, TurnDraws } from "./draws.js";
import type { Draw } from "./gcra.js";

/** CONTRACT §9: spins draw from `spin`, every other partner request from `default`. */
export type Bucket = "spin" | "default";

/** The limiter's answer to one request: plain data the caller acts on (unkey's `ratelimit` is the model). */
export interface Decision {
  admitted: boolean;
  bucket: Bucket;
  /** The bucket's requests per second. */
  limit: number;
  draw: Draw;
}

/** A decision with, when admitted, the next item of the list the request asked for. */
export interface DecisionAndItem {
  decision: Decision;
  item: string | null;
  /** Items left in the list after this one was taken. */
  remaining: number;
}

interface Owner {
  partnerId: string;
  environment: string;
}

/**
 * Per partner and environment, a GCRA bucket per kind of request (CONTRACT §9), on Redis so every
 * API process shares it. A spin's draw and its outcome's pop are one step (`limitAndTake`): nothing
 * is taken from the queue of a refused spin.
 */
export class RateLimiter {
  constructor(
    private readonly draws: TurnDraws,
    private readonly keys: RedisKeys,
    private readonly limits: Record<Bucket, number>,
  ) {}

  async limit(owner: Owner, bucket: Bucket): Promise<Decision> {
    const answer = await this.draws.draw(this.request(owner, bucket, null)).catch(redisDown(bucket));
    return this.decision(bucket, answer.draw!);
  }

  /** Draws from the spin bucket and, when admitted, takes the list's next item (one round trip). */
  async limitAndTake(owner: Owner, list: string): Promise<DecisionAndItem> {
    const answer = await this.draws.draw(this.request(owner, "spin", list)).catch(redisDown("spin"));
    return { decision: this.decision("spin", answer.draw!), item: answer.item, remaining: answer.remaining };
  }

  /** A further item for a request that was admitted already (its first outcome could not be used). */
  async takeAgain(owner: Owner, list: string): Promise<{ item: string | null; remaining: number }> {
    const request = { ...this.request(owner, "spin", list), limit: 0 };
    const { item, remaining } = await this.draws.draw(request).catch(redisDown("spin"));
    return { item, remaining };
  }

  private request(owner: Owner, bucket: Bucket, list: string | null): DrawRequest {
    return {
      tag: `${owner.partnerId}:${owner.environment}`,
      bucketKey: this.keys.rateLimit(bucket, owner.partnerId, owner.environment),
      limit: this.limits[bucket],
      list,
    };
  }

  private decision(bucket: Bucket, draw: Draw): Decision {
    return { admitted: draw.allowed, bucket, limit: this.limits[bucket], draw };
  }
}

/** Redis down: the request would fail anyway further on; a spin must say KS-5003 (not deducted). */
function redisDown(bucket: Bucket) {
  return (error: unknown): never => {
    throw new ServiceError(bucket === "spin" ? ErrorCode.SpinFailed : ErrorCode.Internal, { cause: error });
  };
}

/** `X-RateLimit-*` and the IETF `RateLimit-Policy` / `RateLimit` fields of a decision. */
export function rateLimitHeaders({ bucket, limit, draw }: Decision): Record<string, string> {
  const resetSeconds = String(Math.ceil(draw.resetMs / 1000));
  return {
    "X-RateLimit-Limit": String(limit),
    "X-RateLimit-Remaining": String(draw.remaining),
    "X-RateLimit-Reset": resetSeconds,
    "RateLimit-Policy": `"${bucket}";q=${limit};w=1`,
    RateLimit: `"${bucket}";r=${draw.remaining};t=${resetSeconds}`,
  };
}

/** The answer to a request not admitted: KS-4291 for spins, KS-4292 otherwise, with `Retry-After`. */
export function refusal({ bucket, draw }: Decision): ServiceError {
  metrics.rateLimitRejections.inc({ bucket });
  return new ServiceError(bucket === "spin" ? ErrorCode.SpinRateLimited : ErrorCode.RateLimited, {
    retryAfterSeconds: Math.max(1, Math.ceil(draw.retryAfterMs / 1000)),
  });
}
