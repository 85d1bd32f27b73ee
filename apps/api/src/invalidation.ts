import type { RolloutSwitch } from "@outcomes/db";
import {
  createWorkerRedis,
  type Invalidation,
  type IssuedKeyChange,
  publishInvalidation,
  type RedisClient,
  type RedisKeys,
  type RedisTarget,
  updateIssuedKeys,
} from "@outcomes/queue";
import type { Logger } from "@outcomes/runtime";
import type { KeyVerifier } from "./auth/key-verifier.js";
import type { MaintenanceSwitch } from "./middleware/maintenance.js";
import type { GameCache } from "./spins/game-cache.js";

/** The caches one API process keeps, each dropped (in part) by an invalidation message. */
interface Caches {
  keyVerifier: KeyVerifier;
  maintenance: MaintenanceSwitch;
  games: GameCache;
  rollout: RolloutSwitch;
}

function forget(caches: Caches, what: string): void {
  if (what === "auth") caches.keyVerifier.invalidate();
  else if (what === "maintenance") caches.maintenance.forget();
  else if (what === "rollout") caches.rollout.forget();
  else if (what.startsWith("game:")) caches.games.forget(Number(what.slice("game:".length)));
}

/**
 * Announces a change that is already committed. The publishing process clears its own cache at once,
 * before the change's request answers; a failed publish is logged, not raised: the change stands,
 * and other processes' caches expire within 1 s anyway, so failing the request would only mislead.
 */
export async function announceChange(
  deps: Caches & { redis: RedisClient; keys: RedisKeys; logger: Logger },
  what: Invalidation,
): Promise<void> {
  forget(deps, what);
  try {
    await publishInvalidation(deps.redis, deps.keys, what);
  } catch (error) {
    deps.logger.warn({ err: error, invalidation: what }, "invalidation publish failed; caches expire within 1 s");
  }
}

/**
 * Announces committed changes of API keys (issued, rotated, revoked), after updating the issued-key
 * set (packages/queue issued-keys.ts). A failed update is logged, not raised: the keys work
 * regardless, and one not listed is only counted against its address, as before the set, until the
 * key-expiry role lists it (within the hour).
 */
export async function announceKeyChange(
  deps: Parameters<typeof announceChange>[0],
  change: IssuedKeyChange,
): Promise<void> {
  try {
    await updateIssuedKeys(deps.redis, deps.keys, change);
  } catch (error) {
    // The message only: a failed command's error carries its arguments, the keys' hashes.
    deps.logger.warn({ reason: (error as Error).message }, "issued-key set not updated; the key-expiry role will");
  }
  await announceChange(deps, "auth");
}

/**
 * Subscribes one dedicated connection, which waits Redis out like a worker's (a subscriber never
 * answers a request); caches are also bounded to 1 s, so a lost message only delays.
 */
export async function subscribeInvalidations(
  target: RedisTarget,
  keys: RedisKeys,
  caches: Caches,
  logger: Logger,
): Promise<RedisClient> {
  const subscriber = createWorkerRedis(target);
  subscriber.on("error", (error) => logger.warn({ err: error }, "invalidation subscriber error"));
  subscriber.on("message", (_channel, message: string) => forget(caches, message));
  await subscriber.subscribe(keys.invalidations);
  return subscriber;
}
