import { Redis, type RedisOptions } from "ioredis";

/**
 * Workers block on Redis and must wait it out (`maxRetriesPerRequest: null`); request-path clients
 * fail fast instead of queueing commands while Redis is away (`enableOfflineQueue: false`),
 * so a spin answers KS-5003 at once rather than hanging.
 */
export function createWorkerRedis(url: string, options: RedisOptions = {}): Redis {
  return new Redis(url, { maxRetriesPerRequest: null, ...options });
}

export function createRequestRedis(url: string, options: RedisOptions = {}): Redis {
  return new Redis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: false, ...options });
}

/** Names of the Redis keys the service owns, all under the deployment's prefix. */
export function redisKeys(prefix: string) {
  return {
    outcomeQueue: (gameId: number) => `${prefix}:outcomes:{${gameId}}`,
    rateLimit: (bucket: string, partnerId: string, environment: string) =>
      `${prefix}:ratelimit:${bucket}:${partnerId}:${environment}`,
    /** Per client address: look-ups of keys not found (apps/api auth/failed-auth-throttle.ts). */
    unknownKeys: (address: string) => `${prefix}:unknown-keys:${address}`,
    maintenance: `${prefix}:maintenance`,
    /** Pub/sub channel: auth cache invalidation and maintenance changes. */
    invalidations: `${prefix}:invalidations`,
  };
}
export type RedisKeys = ReturnType<typeof redisKeys>;
