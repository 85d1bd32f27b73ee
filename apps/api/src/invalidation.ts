import type { RedisKeys } from "@outcomes/queue";
import type { Logger } from "@outcomes/runtime";
import { Redis } from "ioredis";
import type { KeyVerifier } from "./auth/key-verifier.js";
import type { MaintenanceSwitch } from "./middleware/maintenance.js";

export type Invalidation = "auth" | "maintenance";

/** Tells every API process that keys/partners or the maintenance flag changed. */
export async function publishInvalidation(redis: Redis, keys: RedisKeys, what: Invalidation): Promise<void> {
  await redis.publish(keys.invalidations, what);
}

/** Subscribes one dedicated connection; caches are also bounded to 1 s, so a lost message only delays. */
export async function subscribeInvalidations(
  redisUrl: string,
  keys: RedisKeys,
  targets: { keyVerifier: KeyVerifier; maintenance: MaintenanceSwitch },
  logger: Logger,
): Promise<Redis> {
  const subscriber = new Redis(redisUrl, { maxRetriesPerRequest: null });
  subscriber.on("error", (error) => logger.warn({ err: error }, "invalidation subscriber error"));
  subscriber.on("message", (_channel, message) => {
    if (message === "auth") targets.keyVerifier.invalidate();
    if (message === "maintenance") targets.maintenance.forget();
  });
  await subscriber.subscribe(keys.invalidations);
  return subscriber;
}
