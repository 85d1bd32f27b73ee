import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { parseArgs } from "node:util";
import { createDatabase, migrateDatabase } from "@outcomes/db";
import { createWorkerRedis, redisKeys } from "@outcomes/queue";
import postgres from "postgres";
import { processCpuMs } from "./bench/cpu.js";
import { failures, runLoad } from "./bench/load.js";
import { peakRssMb, productionNodeArgs, startProcess, stop } from "./bench/processes.js";
import { seedBench } from "./bench/seed.js";

/**
 * `npx tsx scripts/bench-ab.ts [--rounds 5 --duration 4 --connections 64] <bundle>[@--flag,…] …`
 *
 * Compares API builds by CPU per spin on a busy machine: each bundle (an `apps/api/main.js` built by
 * `scripts/build.mjs`, copied under `dist/`, so it finds `node_modules`) runs as its own process with
 * the production flags, all on one seeded database and queue, and the closed-loop spin runs
 * alternate between them round after round, so every build sees the same machine state. Reported
 * per build: API CPU µs per spin (from /proc), the median spins/s, p50 and p99, peak RSS. After `@`,
 * comma-separated node flags (`--…`) and environment settings (`NAME=value`) for that process, to
 * compare settings of one build.
 */
const { values: args, positionals: bundles } = parseArgs({
  allowPositionals: true,
  options: {
    rounds: { type: "string", default: "5" },
    duration: { type: "string", default: "4" },
    connections: { type: "string", default: "64" },
    players: { type: "string", default: "1000" },
  },
});
const rounds = Number(args.rounds);
const durationMs = Number(args.duration) * 1000;
const connections = Number(args.connections);
const players = Number(args.players);
if (bundles.length === 0) throw new Error("name at least one bundle (dist/…/main.js)");

const baseUrl = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/outcomes";
const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const runId = randomBytes(4).toString("hex");
const name = `outcomes_bench_ab_${runId}`;
const withDatabase = (url: string, database: string) => Object.assign(new URL(url), { pathname: `/${database}` }).href;
const benchUrl = withDatabase(baseUrl, name);
const prefix = `bench:${runId}`;
const admin = postgres(withDatabase(baseUrl, "postgres"), { max: 1, onnotice: () => {} });

await migrateDatabase(benchUrl);
const database = createDatabase(benchUrl, { max: 2 });
const redis = createWorkerRedis({ REDIS_URL: redisUrl });
const children: ChildProcess[] = [];
try {
  const spinsNeeded = (rounds + 1) * bundles.length * (durationMs / 1000) * 8_000;
  const seeded = await seedBench(database.db, redis, redisKeys(prefix), { outcomes: spinsNeeded, blockSize: 10_000 });
  const flags = productionNodeArgs("start:api").slice(0, -1);
  const apis = [];
  for (const bundle of bundles) {
    const [path, extra] = bundle.split("@") as [string, string | undefined];
    const settings = extra ? extra.split(",") : [];
    const api = await startProcess(
      [...flags, ...settings.filter((each) => each.startsWith("--")), path],
      {
        ...Object.fromEntries(settings.filter((each) => !each.startsWith("--")).map((each) => each.split("="))),
        DATABASE_URL: benchUrl,
        REDIS_URL: redisUrl,
        REDIS_PREFIX: prefix,
        LOG_LEVEL: "warn",
        RATE_LIMIT_SPINS_PER_SECOND: "1000000",
      },
      "/readyz",
    );
    children.push(api.child);
    apis.push({
      bundle,
      ...api,
      cpuMs: 0,
      spins: 0,
      perSecond: [] as number[],
      p50: [] as number[],
      p99: [] as number[],
    });
  }
  const load = (url: string, ms: number) =>
    runLoad({
      url: `${url}/api/partner/v1/spins`,
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": seeded.apiKey },
      body: JSON.stringify({ gameId: seeded.gameId, playerId: "player-{n}", wagerUsd: 1 }),
      distinct: players,
      connections,
      durationMs: ms,
    });
  for (const api of apis) await load(api.url, 2000);
  for (let round = 0; round < rounds; round++) {
    // Alternate the order too, so no build always runs right after the same other one.
    for (const api of round % 2 ? [...apis].reverse() : apis) {
      const before = processCpuMs(api.child.pid) ?? Number.NaN;
      const result = await load(api.url, durationMs);
      if (failures(result) > 0) throw new Error(`${api.bundle}: ${JSON.stringify(result.statuses)}`);
      api.cpuMs += (processCpuMs(api.child.pid) ?? Number.NaN) - before;
      api.spins += result.completed;
      api.perSecond.push(Math.round(result.perSecond));
      api.p50.push(Math.round(result.p50Ms * 10) / 10);
      api.p99.push(Math.round(result.p99Ms * 10) / 10);
    }
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
  for (const api of apis) {
    console.log(
      JSON.stringify({
        bundle: api.bundle,
        apiCpuUsPerSpin: Math.round((api.cpuMs * 1000) / api.spins),
        spinsPerSecond: median(api.perSecond),
        p50Ms: median(api.p50),
        p99Ms: median(api.p99),
        peakRssMb: peakRssMb(api.child.pid),
        rounds: { perSecond: api.perSecond, p99Ms: api.p99 },
      }),
    );
  }
} finally {
  for (const child of children) await stop(child);
  const stale = await redis.keys(`${prefix}:*`);
  if (stale.length > 0) await redis.del(...stale);
  await redis.quit();
  await database.close();
  await admin.unsafe(`drop database if exists "${name}" with (force)`);
  await admin.end();
}
