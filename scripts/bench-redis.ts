import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { createRequestRedis, keyServers, type RedisClient, redisKeys, untilReady } from "@outcomes/queue";
import { parseEnv } from "@outcomes/runtime";
import { RateLimiter, REQUEST_REDIS_OPTIONS, TurnDraws } from "../apps/api/src/ratelimit/index.js";

/**
 * `npm run bench:redis [-- --partners 8 --concurrency 256 --seconds 5]`
 *
 * The spin path's Redis work alone: each spin's rate-limit draw + LPOP, sent as the API sends them
 * (`RateLimiter.limitAndTake`: one DRAWS_SCRIPT call per hash slot and turn, on the request client
 * with auto-pipelining), spread over
 * `partners` partners (one game each, so on a cluster their keys spread over the shards). Against
 * REDIS_URL, or the cluster of REDIS_CLUSTER_NODES when set. Reports spins/s, the client's CPU per
 * spin and, for servers on this machine, every redis-server's CPU per spin (from /proc):
 * the per-shard cost of a spin (docs/redis-cluster.md). Keys are deleted afterwards.
 */
const { values: args } = parseArgs({
  options: {
    partners: { type: "string", default: "8" },
    concurrency: { type: "string", default: "256" },
    seconds: { type: "string", default: "5" },
  },
});
const partners = Number(args.partners);
const concurrency = Number(args.concurrency);
const durationMs = Number(args.seconds) * 1000;
const env = parseEnv({
  REDIS_URL: process.env.REDIS_URL,
  REDIS_CLUSTER_NODES: process.env.REDIS_CLUSTER_NODES,
});
const prefix = `bench-redis:${randomBytes(4).toString("hex")}`;
const keys = redisKeys(prefix);
const ITEM = JSON.stringify({ b: 1, i: 0, t: "T1", m: 2_000_000, r: [[1, 2, 3]] });

/** utime + stime of a local process, in ms (null when it is not on this machine). */
function cpuMs(pid: number): number | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return null;
  }
}

async function serverPids(redis: RedisClient): Promise<number[]> {
  const infos = await Promise.all(keyServers(redis).map((server) => server.info("server")));
  return infos.map((info) => Number(/process_id:(\d+)/.exec(info)?.[1]));
}

// The API's own client options (build-api.ts).
const redis = createRequestRedis(env, REQUEST_REDIS_OPTIONS);
const limiter = new RateLimiter(new TurnDraws(redis), keys, { spin: 1_000_000_000, default: 1 });
try {
  // The request client queues nothing while it connects.
  await untilReady(redis);
  const owners = Array.from({ length: partners }, (_, index) => ({
    id: index + 1,
    partnerId: `ptr_bench_${index}`,
    environment: "production",
  }));
  // Enough items that no list runs dry: the bench measures pops, not empty answers.
  const perList = Math.ceil((200_000 * (durationMs / 1000)) / partners);
  for (const owner of owners) {
    for (let pushed = 0; pushed < perList; pushed += 10_000) {
      await redis.rpush(keys.outcomeQueue(owner), ...Array(Math.min(10_000, perList - pushed)).fill(ITEM));
    }
  }
  const pids = await serverPids(redis);
  const serverBefore = pids.map(cpuMs);
  const clientBefore = process.cpuUsage();
  const started = performance.now();
  let done = 0;
  let refused = 0;
  const loop = async (worker: number) => {
    const owner = owners[worker % owners.length]!;
    const queue = keys.outcomeQueue(owner);
    while (performance.now() - started < durationMs) {
      const { decision, item } = await limiter.limitAndTake(owner, queue);
      if (!decision.admitted || item === null) refused++;
      done++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, (_, worker) => loop(worker)));
  const elapsed = performance.now() - started;
  const client = process.cpuUsage(clientBefore);
  const serverAfter = pids.map(cpuMs);
  const perServer = pids.map((pid, index) => {
    const before = serverBefore[index];
    const after = serverAfter[index];
    return before == null || after == null ? null : { pid, cpuMs: after - before };
  });
  const serverTotal = perServer.reduce((sum, each) => sum + (each?.cpuMs ?? 0), 0);
  console.log(
    JSON.stringify(
      {
        mode: env.REDIS_CLUSTER_NODES ? `cluster of ${pids.length} masters` : "one server",
        partners,
        concurrency,
        spins: done,
        refusedOrEmpty: refused,
        spinsPerSecond: Math.round((done / elapsed) * 1000),
        clientCpuUsPerSpin: Math.round(((client.user + client.system) / done) * 100) / 100,
        serverCpuUsPerSpin: perServer.every(Boolean)
          ? Math.round(((serverTotal * 1000) / done) * 100) / 100
          : "servers not on this machine",
        serverCpuMsEach: perServer.map((each) => each?.cpuMs ?? null),
      },
      null,
      2,
    ),
  );
} finally {
  for (const server of keyServers(redis)) {
    let cursor = "0";
    do {
      const [next, found] = await server.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 1000);
      cursor = next;
      await Promise.all(found.map((key) => server.unlink(key)));
    } while (cursor !== "0");
  }
  await redis.quit();
}
