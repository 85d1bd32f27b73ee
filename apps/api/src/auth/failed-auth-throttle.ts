import { ServiceError } from "@outcomes/core";
import type { RedisClient } from "@outcomes/queue";
import { metrics } from "@outcomes/runtime";
import type { LookUpGuard } from "./key-verifier.js";

/** Look-ups of keys that turn out not to exist, allowed per client address and window. */
export const UNKNOWN_KEYS_PER_WINDOW = 20;
const UNKNOWN_KEYS_WINDOW_MS = 60_000;

/**
 * Counts one client's look-ups of keys this process has not found before in a fixed window in
 * Redis (so every API process shares the count), and gives the count back for each key that exists.
 * Past the limit the client gets 429 KS-4292 with `Retry-After` until the window ends, before any
 * look-up. Counting comes before the look-up, atomically, so concurrent requests cannot slip past
 * the limit together. Redis unreachable (or no client address): the look-up goes ahead (logged)
 * rather than refusing keys that may be valid; the bounded caches still hold memory flat.
 */
export function unknownKeyGuard(
  redis: RedisClient,
  // A function: the address is worked out only when a look-up needs it, never for a known key.
  keyOf: () => string,
  onUnavailable: (error: unknown) => void,
): LookUpGuard {
  return {
    async admit() {
      let count: number;
      let ttlMs: number;
      try {
        const key = keyOf();
        const replies = await redis.multi().incr(key).pexpire(key, UNKNOWN_KEYS_WINDOW_MS, "NX").pttl(key).exec();
        count = Number(replies?.[0]?.[1]);
        ttlMs = Number(replies?.[2]?.[1]);
      } catch (error) {
        onUnavailable(error);
        return;
      }
      if (!(count > UNKNOWN_KEYS_PER_WINDOW)) return;
      metrics.rateLimitRejections.inc({ bucket: "unknown_key" });
      throw new ServiceError("KS-4292", {
        message: "Too many requests with unknown API keys from this address",
        retryAfterSeconds: Math.max(1, Math.ceil((ttlMs > 0 ? ttlMs : UNKNOWN_KEYS_WINDOW_MS) / 1000)),
      });
    },
    async release() {
      try {
        const key = keyOf();
        // A window that ended meanwhile restarts at -1: one spare look-up, never a key without expiry.
        await redis.multi().decr(key).pexpire(key, UNKNOWN_KEYS_WINDOW_MS, "NX").exec();
      } catch (error) {
        onUnavailable(error);
      }
    },
  };
}
