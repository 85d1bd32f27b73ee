import type { RedisClient, RedisKeys } from "./redis.js";

/**
 * The operator plane's shared Redis state, used by the API and the CLI alike: the maintenance
 * flag and the pub/sub messages that tell every API process to drop its caches (`game:<id>` after
 * a game's rules changed, `rollout` when a release's rollout finished). A process ignores a message it
 * does not know, as the previous release does `rollout`.
 */
export type Invalidation = "auth" | "maintenance" | "rollout" | `game:${number}`;

export async function publishInvalidation(redis: RedisClient, keys: RedisKeys, what: Invalidation): Promise<void> {
  await redis.publish(keys.invalidations, what);
}

export async function readMaintenanceFlag(redis: RedisClient, keys: RedisKeys): Promise<boolean> {
  return (await redis.get(keys.maintenance)) === "1";
}

export async function writeMaintenanceFlag(redis: RedisClient, keys: RedisKeys, enabled: boolean): Promise<void> {
  if (enabled) await redis.set(keys.maintenance, "1");
  else await redis.del(keys.maintenance);
}
