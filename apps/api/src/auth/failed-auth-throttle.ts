import { ErrorCode, ServiceError } from "@outcomes/core";
import { isIssuedKey, type RedisClient, type RedisKeys, updateIssuedKeys } from "@outcomes/queue";
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
 * the limit together. A key listed in the issued-key set (packages/queue issued-keys.ts) is not
 * counted at all, so minted keys from an address it shares (a NAT, a load balancer) cannot hold it
 * up; it is still looked up and verified like any other. A live key found but not listed (issued
 * by a release that does not keep the set) is listed, a listed one found revoked or expired is
 * unlisted. Redis unreachable (or no client address): the look-up goes ahead (logged) rather than
 * refusing keys that may be valid; the bounded caches still hold memory flat.
 */
export function unknownKeyGuard(
  redis: RedisClient,
  keys: RedisKeys,
  // A function: the address is worked out only when a look-up needs it, never for a known key.
  addressOf: () => string,
  onUnavailable: (error: unknown) => void,
): LookUpGuard {
  /** The key the look-up is for, whether it is listed, and the counter it was counted in (until given back). */
  let keyHash = "";
  let listed = false;
  let counted: string | undefined;

  const giveBack = async () => {
    const counter = counted;
    counted = undefined;
    if (!counter) return;
    try {
      // A window that ended meanwhile restarts at -1: one spare look-up, never a key without expiry.
      await redis.multi().decr(counter).pexpire(counter, UNKNOWN_KEYS_WINDOW_MS, "NX").exec();
    } catch (error) {
      onUnavailable(error);
    }
  };

  return {
    async admit(hash) {
      keyHash = hash;
      let count: number;
      let ttlMs: number;
      try {
        listed = await isIssuedKey(redis, keys, keyHash, Date.now());
        if (listed) return;
        const counter = keys.unknownKeys(addressOf());
        const replies = await redis
          .multi()
          .incr(counter)
          .pexpire(counter, UNKNOWN_KEYS_WINDOW_MS, "NX")
          .pttl(counter)
          .exec();
        counted = counter;
        count = Number(replies?.[0]?.[1]);
        ttlMs = Number(replies?.[2]?.[1]);
      } catch (error) {
        onUnavailable(error);
        return;
      }
      if (!(count > UNKNOWN_KEYS_PER_WINDOW)) return;
      metrics.rateLimitRejections.inc({ bucket: "unknown_key" });
      throw new ServiceError(ErrorCode.RateLimited, {
        message: "Too many requests with unknown API keys from this address",
        retryAfterSeconds: Math.max(1, Math.ceil((ttlMs > 0 ? ttlMs : UNKNOWN_KEYS_WINDOW_MS) / 1000)),
      });
    },
    async found(liveUntil) {
      await giveBack();
      if (listed === (liveUntil !== null)) return;
      try {
        const change =
          liveUntil === null ? { gone: [keyHash] } : { live: [{ keyHash, expiresAt: new Date(liveUntil) }] };
        await updateIssuedKeys(redis, keys, change);
      } catch (error) {
        onUnavailable(error);
      }
    },
    release: giveBack,
  };
}
