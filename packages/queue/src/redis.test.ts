import { Cluster, Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { closeRedis, createRequestRedis, createWorkerRedis, type RedisClient, redisKeys, untilReady } from "./redis.js";

const nodes = process.env.REDIS_CLUSTER_NODES;
const env = {
  REDIS_URL: process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
  REDIS_CLUSTER_NODES: nodes
    ?.split(",")
    .map((node) => ({ host: node.split(":")[0]!, port: Number(node.split(":")[1]) })),
};
const opened: RedisClient[] = [];
const open = <T extends RedisClient>(client: T) => {
  opened.push(client);
  return client;
};
afterAll(async () => {
  await Promise.all(opened.map(closeRedis));
});

describe("the Redis factory", () => {
  it("opens the shape the environment names, for the request path and for workers alike", async () => {
    const shape = env.REDIS_CLUSTER_NODES ? Cluster : Redis;
    const request = open(createRequestRedis(env));
    const worker = open(createWorkerRedis(env));
    expect(request).toBeInstanceOf(shape);
    expect(worker).toBeInstanceOf(shape);
    expect(await worker.ping()).toBe("PONG");
    await untilReady(request);
    expect(await request.ping()).toBe("PONG");
  });

  it("closes a request client still connecting without throwing", async () => {
    const request = createRequestRedis(env);
    expect(request.status).not.toBe("ready");
    let readied = false;
    request.on("ready", () => {
      readied = true;
    });
    await closeRedis(request);
    // Closed for good: it does not go on to connect.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(readied).toBe(false);
    expect(["end", "disconnecting"]).toContain(request.status);
  });
});

describe.runIf(env.REDIS_CLUSTER_NODES)("key names on a Redis Cluster", () => {
  it("put the keys each script or MULTI touches in one hash slot", async () => {
    const redis = open(createWorkerRedis(env));
    const slot = async (key: string) => Number(await redis.cluster("KEYSLOT", key));
    const keys = redisKeys("ks");
    const owner = { partnerId: "ptr_01HZX3", environment: "production" };
    // The spin script (bucket + list), the blocks MULTI (list + marker), the give-back and reveal
    // sweep's scripts (list + a block's markers), every game of the owner.
    const together = [
      keys.rateLimit("spin", owner.partnerId, owner.environment),
      keys.rateLimit("default", owner.partnerId, owner.environment),
      keys.outcomeQueue({ id: 7, ...owner }),
      keys.outcomesLoadedThrough({ id: 7, ...owner }),
      keys.outcomesRetired({ id: 7, ...owner }, 1042),
      keys.outcomesGoneSince({ id: 7, ...owner }, 1042),
      keys.outcomeQueue({ id: 8, ...owner }),
    ];
    expect(new Set(await Promise.all(together.map(slot))).size).toBe(1);
    // BullMQ's scripts touch many keys of a queue: all under one tag.
    const bull = [`${keys.bull}:blocks:wait`, `${keys.bull}:blocks:id`, `${keys.bull}:webhooks:events`];
    expect(new Set(await Promise.all(bull.map(slot))).size).toBe(1);
  });
});
