import { Cluster, type ClusterOptions, Redis, type RedisOptions } from "ioredis";

/** The deployment's Redis, whichever shape it has: one server, or a Redis Cluster. */
export type RedisClient = Redis | Cluster;

/** Where the deployment's Redis is: the env's REDIS_URL, or REDIS_CLUSTER_NODES when set. */
export interface RedisTarget {
  REDIS_URL: string;
  REDIS_CLUSTER_NODES?: readonly { host: string; port: number }[] | undefined;
}

/** What a caller may tune on a connection; the same meaning on one server and on a cluster. */
export type ConnectionOptions = Pick<
  RedisOptions,
  "enableAutoPipelining" | "lazyConnect" | "connectTimeout" | "retryStrategy" | "connectionName"
> & {
  /**
   * On a cluster, commands kept out of the auto-pipeline: ioredis routes a command's auto-pipeline
   * by its first argument, which for a script with a variable number of keys is that number, not a
   * key; pipelined with commands of other slots it fails them all ("All keys in the pipeline should
   * belong to the same slots allocation group", redis/ioredis#2109). One server has no slots: ignored.
   */
  clusterUnpipelined?: string[];
};

/**
 * Workers block on Redis and must wait it out (`maxRetriesPerRequest: null`, which BullMQ requires);
 * request-path clients fail fast instead of queueing commands while Redis is away
 * (`enableOfflineQueue: false`), so a spin answers KS-5003 at once rather than hanging.
 */
export function createWorkerRedis(target: RedisTarget, options: ConnectionOptions = {}): RedisClient {
  return connect(target, { maxRetriesPerRequest: null, ...options }, {});
}

export function createRequestRedis(target: RedisTarget, options: ConnectionOptions = {}): RedisClient {
  // On a cluster, a command whose master is gone (failover under way: the connection closed, or
  // CLUSTERDOWN) fails at once rather than being retried for seconds; MOVED after the replica's
  // promotion is still followed, so the next spin reaches the new master.
  return connect(
    target,
    { maxRetriesPerRequest: 1, enableOfflineQueue: false, ...options },
    { retryDelayOnFailover: 0, retryDelayOnClusterDown: 0 },
  );
}

function connect(
  target: RedisTarget,
  { clusterUnpipelined = [], ...options }: RedisOptions & Pick<ConnectionOptions, "clusterUnpipelined">,
  clusterOnly: ClusterOptions,
): RedisClient {
  const nodes = target.REDIS_CLUSTER_NODES;
  if (!nodes) return new Redis(target.REDIS_URL, options);
  const { enableAutoPipelining, enableOfflineQueue, lazyConnect, retryStrategy, ...nodeOptions } = options;
  return new Cluster(
    nodes.map((node) => ({ ...node })),
    {
      ...clusterOnly,
      enableAutoPipelining,
      autoPipeliningIgnoredCommands: clusterUnpipelined,
      enableOfflineQueue,
      lazyConnect,
      clusterRetryStrategy: retryStrategy,
      // Every node is reached with REDIS_URL's credentials and TLS (`rediss:`).
      redisOptions: { ...credentialsOf(target.REDIS_URL), ...nodeOptions },
    },
  );
}

/**
 * Resolves once a request client can take commands: connected, and on a cluster every master's
 * connection open too. ioredis opens a node's connection at its first command, and a client without
 * an offline queue refuses commands for a node still connecting: a PING to each master opens them
 * (a node's own connection queues it). Rejects when Redis cannot be reached. For one-shot clients
 * (the CLI), whose first commands come all at once.
 */
export async function untilReady(redis: RedisClient): Promise<void> {
  await readyOrClosed(redis);
  if (redis instanceof Cluster) await Promise.all(redis.nodes("master").map((node) => node.ping()));
}

/**
 * Closes a client: QUIT when connected, else a plain disconnect. A request client has no offline
 * queue, so QUIT on one still connecting (or with Redis down) would throw and leave it reconnecting.
 */
export async function closeRedis(redis: RedisClient): Promise<void> {
  if (redis.status === "ready") await redis.quit().catch(() => redis.disconnect());
  else redis.disconnect();
}

function readyOrClosed(client: RedisClient): Promise<void> {
  if (client.status === "ready") return Promise.resolve();
  return new Promise((resolve, reject) => {
    const ready = () => {
      client.off("end", ended);
      resolve();
    };
    const ended = () => {
      client.off("ready", ready);
      reject(new Error("Redis connection closed before it was ready"));
    };
    client.once("ready", ready);
    client.once("end", ended);
  });
}

/** The servers that hold keys: the one server, or each master of a cluster (for SCAN and the like). */
export function keyServers(redis: RedisClient): Redis[] {
  return redis instanceof Cluster ? redis.nodes("master") : [redis];
}

function credentialsOf(url: string): RedisOptions {
  const parsed = new URL(url);
  return {
    ...(parsed.username ? { username: decodeURIComponent(parsed.username) } : {}),
    ...(parsed.password ? { password: decodeURIComponent(parsed.password) } : {}),
    ...(parsed.protocol === "rediss:" ? { tls: {} } : {}),
  };
}

/**
 * Whose keys a game's keys share a hash slot with: the game's partner and environment. The spin
 * path has it in the game's rules, the blocks worker in the game's row.
 */
export interface GameOwner {
  /** The game's id (`gameConfigId`). */
  id: number;
  partnerId: string;
  environment: string;
}

/**
 * Names of the Redis keys the service owns, all under the deployment's prefix. Keys that one Lua
 * script or MULTI touches together share a hash tag (`{…}`), so they live in one slot of a Redis
 * Cluster: a partner and environment's rate-limit buckets and its games' outcome lists (with their
 * loaded-through markers) are all tagged `{partnerId:environment}` (docs/redis-cluster.md).
 */
export function redisKeys(prefix: string) {
  const tag = (partnerId: string, environment: string) => `{${partnerId}:${environment}}`;
  const outcomeQueue = (game: GameOwner) => `${prefix}:${tag(game.partnerId, game.environment)}:outcomes:${game.id}`;
  return {
    outcomeQueue,
    /** The sequence of the last block loaded into the game's list (packages/blocks outcome-list.ts). */
    outcomesLoadedThrough: (game: GameOwner) => `${outcomeQueue(game)}:loaded-through`,
    /**
     * Set while a block's unused entries are retired (packages/blocks reveal.ts): a spin that fails
     * then drops its entry of that block instead of giving it back.
     */
    outcomesRetired: (game: GameOwner, blockId: number) => `${outcomeQueue(game)}:retired:${blockId}`,
    /**
     * Since when (ms) none of a block's unused entries has been in the list, once a later block has
     * started (packages/blocks lost-entries.ts): its last index was lost in flight.
     */
    outcomesGoneSince: (game: GameOwner, blockId: number) => `${outcomeQueue(game)}:gone-since:${blockId}`,
    rateLimit: (bucket: string, partnerId: string, environment: string) =>
      `${prefix}:${tag(partnerId, environment)}:ratelimit:${bucket}`,
    /** Per client address: look-ups of keys not found (apps/api auth/failed-auth-throttle.ts). */
    unknownKeys: (address: string) => `${prefix}:unknown-keys:${address}`,
    /** Per client address: its replay page requests, a GCRA bucket (apps/api replay/address-limit.ts). */
    replayRequests: (address: string) => `${prefix}:replay-requests:${address}`,
    /** Hashes of the API keys known to exist, scored by expiry: they skip that count (issued-keys.ts). */
    issuedApiKeys: `${prefix}:issued-api-keys`,
    /**
     * A paced webhook's schedule: when its next send slot is free, in µs of Redis's clock (the
     * webhooks worker's pacing.ts). One key per webhook, so a script touches one slot of a cluster.
     */
    webhookPace: (webhookId: string) => `${prefix}:webhook-pace:${webhookId}`,
    maintenance: `${prefix}:maintenance`,
    /** Pub/sub channel: auth cache invalidation and maintenance changes. */
    invalidations: `${prefix}:invalidations`,
    bull: bullPrefix(prefix),
  };
}
export type RedisKeys = ReturnType<typeof redisKeys>;

/**
 * BullMQ's key prefix for the deployment: in braces, one hash tag for every key of its queues, as
 * BullMQ's scripts need on a cluster (BullMQ's cluster guide).
 */
export function bullPrefix(prefix: string): string {
  return `{${prefix}:bull}`;
}

/**
 * Removes every key of a deployment prefix, BullMQ's included, on each master of a cluster: what a
 * throwaway deployment (a test's, a benchmark's) leaves behind. One key per UNLINK, since on a
 * cluster the keys of one SCAN page live in many slots.
 */
export async function deleteKeysUnder(redis: RedisClient, prefix: string): Promise<void> {
  for (const server of keyServers(redis)) {
    for (const pattern of [`${prefix}:*`, `${bullPrefix(prefix)}*`]) {
      let cursor = "0";
      do {
        const [next, keys] = await server.scan(cursor, "MATCH", pattern, "COUNT", 1000);
        cursor = next;
        await Promise.all(keys.map((key) => server.unlink(key)));
      } while (cursor !== "0");
    }
  }
}
