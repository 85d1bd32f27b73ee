import { createWorkerRedis, type Invalidation, publishInvalidation, type RedisKeys } from "@outcomes/queue";
import type { Logger } from "@outcomes/runtime";
import type { Redis } from "ioredis";
import type { KeyVerifier } from "./auth/key-verifier.js";
import type { MaintenanceSwitch } from "./middleware/maintenance.js";

/**
 * Announces a change that is already committed. The publishing process clears its own cache at once;
 * a failed publish is logged, not raised: the change stands, and other processes' caches expire
 * within 1 s anyway, so failing the operator's request would only mislead them.
 */
export async function announceChange(
  deps: { redis: Redis; keys: RedisKeys; logger: Logger; keyVerifier: KeyVerifier; maintenance: MaintenanceSwitch },
  what: Invalidation,
): Promise<void> {
  if (what === "auth") deps.keyVerifier.invalidate();
  else deps.maintenance.forget();
  try {
    await publishInvalidation(deps.redis, deps.keys, what);
  } catch (error) {
    deps.logger.warn({ err: error, invalidation: what }, "invalidation publish failed; caches expire within 1 s");
  }
}

/**
 * Subscribes one dedicated connection, which waits Redis out like a worker's (a subscriber never
 * answers a request); caches are also bounded to 1 s, so a lost message only delays.
 */
export async function subscribeInvalidations(
  redisUrl: string,
  keys: RedisKeys,
  targets: { keyVerifier: KeyVerifier; maintenance: MaintenanceSwitch },
  logger: Logger,
): Promise<Redis> {
  const subscriber = createWorkerRedis(redisUrl);
  subscriber.on("error", (error) => logger.warn({ err: error }, "invalidation subscriber error"));
  subscriber.on("message", (_channel, message) => {
    if (message === "auth") targets.keyVerifier.invalidate();
    if (message === "maintenance") targets.maintenance.forget();
  });
  await subscriber.subscribe(keys.invalidations);
  return subscriber;
}
