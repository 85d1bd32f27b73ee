import { type ChildProcess, execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { cpus } from "node:os";
import { parseArgs } from "node:util";
import { createDatabase, migrateDatabase, spins } from "@outcomes/db";
import { createWorkerRedis, redisKeys } from "@outcomes/queue";
import { parseEnv } from "@outcomes/runtime";
import { count, sql } from "drizzle-orm";
import postgres from "postgres";
import { measureGeneration } from "./bench/blocks.js";
import { loadAverage, processCpuMs } from "./bench/cpu.js";
import { failures, type LoadResult, runLoad } from "./bench/load.js";
import { type FixedRateResult, runFixedRate } from "./bench/open-loop.js";
import { peakRssMb, productionNodeArgs, startProcess, stop } from "./bench/processes.js";
import { latencySvg, writeJson, writeSvg } from "./bench/report.js";
import { seedBench } from "./bench/seed.js";

/**
 * `npm run bench [-- --rounds 3 --duration 5 --fixed-duration 8 --connections 32 --players 1000]`
 *
 * Seeds a throwaway database (`outcomes_bench` beside DATABASE_URL) and a Redis prefix of its own,
 * starts the API exactly as `npm run start:api` does and a Hono hello-world (each its own process,
 * both alive throughout), then:
 * 1. closed loop: alternates spin and hello-world runs (`--rounds` of each, warm-up not counted) and
 *    reports the median spins/s, hello/s and spin/hello ratio of the same rounds;
 * 2. open loop at a fixed rate of 50% and 80% of the median saturation: p50/p99/p99.9 measured from
 *    each request's scheduled send time (no coordinated omission);
 * 3. server CPU per spin, the API's Postgres backends' CPU per spin, the API process's peak RSS;
 * 4. block generation with the blocks worker's code: one 10,000-outcome block, a TARGET fill;
 * then checks that every 200 is one spin row and one outcome gone, writes bench-results/latest.json
 * and bench-results/latency.svg, and cleans up. `--profile` writes the API's V8 CPU profile.
 */
const { values: args } = parseArgs({
  options: {
    rounds: { type: "string", default: "3" },
    duration: { type: "string", default: "5" },
    "fixed-duration": { type: "string", default: "8" },
    warmup: { type: "string", default: "2" },
    connections: { type: "string", default: "32" },
    players: { type: "string", default: "1000" },
    profile: { type: "boolean", default: false },
  },
});
const rounds = Number(args.rounds);
const durationMs = Number(args.duration) * 1000;
const fixedMs = Number(args["fixed-duration"]) * 1000;
const warmupMs = Number(args.warmup) * 1000;
const connections = Number(args.connections);
const players = Number(args.players);
const BLOCK_SIZE = 10_000;
const TARGET_READY_BLOCKS = 4;
// Enough for 15,000 spins/s throughout every spin run: the queue must never run dry.
const spinSeconds = (warmupMs + rounds * durationMs + 2 * fixedMs) / 1000;
const outcomes = Math.ceil(spinSeconds * 15_000);

const baseUrl = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/outcomes";
const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const benchUrl = withDatabase(baseUrl, "outcomes_bench");
const prefix = `bench:${randomBytes(4).toString("hex")}`;

function withDatabase(url: string, name: string): string {
  const next = new URL(url);
  next.pathname = `/${name}`;
  return next.toString();
}

async function dropBenchDatabase(): Promise<void> {
  const admin = postgres(withDatabase(baseUrl, "postgres"), { max: 1, onnotice: () => {} });
  await admin.unsafe(`drop database if exists "outcomes_bench" with (force)`);
  await admin.end();
}

/** CPU time used so far by some processes together; null when it cannot be read. */
function cpuMsOf(pids: Array<number | undefined>): number | null {
  const each = pids.map(processCpuMs);
  return each.some((ms) => ms === null) ? null : each.reduce<number>((sum, ms) => sum + (ms ?? 0), 0);
}

/** The Postgres backends serving the API's pool; none when Postgres is remote. */
async function apiBackendPids(sql: postgres.Sql): Promise<number[]> {
  if (!["127.0.0.1", "localhost", "[::1]"].includes(new URL(benchUrl).hostname)) return [];
  const rows = await sql<{ pid: number }[]>`
    select pid from pg_stat_activity where datname = 'outcomes_bench' and pid <> pg_backend_pid()`;
  return rows.map((row) => row.pid);
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};
const round1 = (n: number) => Math.round(n * 10) / 10;
const brief = (r: LoadResult | FixedRateResult) => ({
  perSecond: Math.round(r.perSecond),
  p50Ms: round1(r.p50Ms),
  p99Ms: round1(r.p99Ms),
  p999Ms: round1(r.p999Ms),
  maxMs: round1(r.maxMs),
  statuses: r.statuses,
});

/** Progress on stderr, so a long run shows where it is. */
const step = (what: string) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${what}\n`);

step("migrating the bench database");
await dropBenchDatabase();
await migrateDatabase(benchUrl);
const database = createDatabase(benchUrl, { max: 2 });
// REDIS_CLUSTER_NODES set: the bench runs on that cluster (the API too).
const redisEnv = parseEnv({ REDIS_URL: redisUrl, REDIS_CLUSTER_NODES: process.env.REDIS_CLUSTER_NODES });
const redis = createWorkerRedis(redisEnv);
const children: ChildProcess[] = [];
try {
  const keys = redisKeys(prefix);
  const loadAtStart = loadAverage();
  step(`seeding ${outcomes} outcomes`);
  const seeded = await seedBench(database.db, redis, keys, { outcomes, blockSize: BLOCK_SIZE });
  const queuedBefore = await redis.llen(keys.outcomeQueue(seeded.game));

  step("building the API bundle (npm run build)");
  execFileSync(process.execPath, ["scripts/build.mjs"], { stdio: "ignore" });
  // The API exactly as `npm run start:api` runs it in production: the bundle on plain node, same flags.
  const api = await startProcess(
    [...(args.profile ? ["--cpu-prof", "--cpu-prof-dir", "bench-results"] : []), ...productionNodeArgs("start:api")],
    {
      DATABASE_URL: benchUrl,
      REDIS_URL: redisUrl,
      REDIS_CLUSTER_NODES: process.env.REDIS_CLUSTER_NODES ?? "",
      REDIS_PREFIX: prefix,
      LOG_LEVEL: "warn",
      RATE_LIMIT_SPINS_PER_SECOND: "1000000",
    },
    "/readyz",
  );
  children.push(api.child);
  const hello = await startProcess(["--import", "tsx", "scripts/bench/hello.ts"], {}, "/hello");
  children.push(hello.child);

  const spinTarget = {
    url: `${api.url}/api/partner/v1/spins`,
    method: "POST" as const,
    headers: { "content-type": "application/json", "x-api-key": seeded.apiKey },
    body: JSON.stringify({ gameId: seeded.gameId, playerId: "player-{n}", wagerUsd: 1 }),
    distinct: players,
  };
  const spinLoad = (ms: number) => runLoad({ ...spinTarget, connections, durationMs: ms });
  const helloLoad = (ms: number) =>
    runLoad({ url: `${hello.url}/hello`, method: "GET", headers: {}, connections, durationMs: ms });

  step("warm-up");
  const warm = await spinLoad(warmupMs);
  await helloLoad(warmupMs);
  const backends = await apiBackendPids(database.sql);
  const cpuBefore = { api: cpuMsOf([api.child.pid]), pg: cpuMsOf(backends), hello: cpuMsOf([hello.child.pid]) };
  const loadBefore = loadAverage();
  const closed: Array<{ spin: LoadResult; hello: LoadResult; ratio: number; loadAverage: string }> = [];
  for (let i = 0; i < rounds; i++) {
    const loadNow = loadAverage();
    step(`closed loop, round ${i + 1} of ${rounds}`);
    const spin = await spinLoad(durationMs);
    const helloRun = await helloLoad(durationMs);
    closed.push({ spin, hello: helloRun, ratio: spin.perSecond / helloRun.perSecond, loadAverage: loadNow });
  }
  const cpuAfter = { api: cpuMsOf([api.child.pid]), pg: cpuMsOf(backends), hello: cpuMsOf([hello.child.pid]) };
  const closedSpins = closed.reduce((sum, r) => sum + r.spin.completed, 0);
  const closedHellos = closed.reduce((sum, r) => sum + r.hello.completed, 0);
  const perRequestUs = (from: number | null, to: number | null, n: number) =>
    from === null || to === null ? null : Math.round(((to - from) * 1000) / Math.max(1, n));
  const saturation = median(closed.map((r) => r.spin.perSecond));

  const fixed: Array<{ fraction: number; loadAverage: string; result: FixedRateResult }> = [];
  for (const fraction of [0.5, 0.8]) {
    const loadNow = loadAverage();
    step(`fixed rate, ${fraction * 100}% of ${Math.round(saturation)} spins/s`);
    const result = await runFixedRate({
      ...spinTarget,
      ratePerSecond: Math.max(1, Math.round(saturation * fraction)),
      durationMs: fixedMs,
      // The connections the saturation was measured with: the same client, only paced.
      maxConnections: connections,
    });
    fixed.push({ fraction, loadAverage: loadNow, result });
  }
  const apiPeakRss = peakRssMb(api.child.pid);
  await stop(api.child);
  await stop(hello.child);

  // Every 200 is exactly one spin row and one outcome gone from the queue: nothing lost or doubled.
  const served =
    (warm.statuses["200"] ?? 0) +
    closed.reduce((sum, r) => sum + (r.spin.statuses["200"] ?? 0), 0) +
    fixed.reduce((sum, r) => sum + (r.result.statuses["200"] ?? 0), 0);
  const [rows] = await database.db.select({ n: count() }).from(spins);
  const queuedAfter = await redis.llen(keys.outcomeQueue(seeded.game));
  const consistent = rows?.n === served && queuedBefore - queuedAfter === served;
  const errors =
    closed.reduce((sum, r) => sum + failures(r.spin), 0) + fixed.reduce((sum, r) => sum + failures(r.result), 0);

  step("block generation");
  // The spin rounds left ~100,000 fresh rows: flush them first, so a checkpoint (or autovacuum)
  // started by the load does not land in the middle of the generation runs.
  await database.db.execute(sql`checkpoint`).catch(() => step("checkpoint skipped: needs pg_checkpoint"));
  await database.db.execute(sql`vacuum (analyze) spins`);
  const generation = await measureGeneration(database.db, redis, keys, seeded, {
    blockSize: BLOCK_SIZE,
    targetBlocks: TARGET_READY_BLOCKS,
    repeats: 7,
  });

  const results = {
    date: new Date().toISOString(),
    machine: { cpus: cpus().length, loadAverageAtStart: loadAtStart, loadAverageBeforeRuns: loadBefore },
    settings: { rounds, durationS: durationMs / 1000, fixedDurationS: fixedMs / 1000, connections, players },
    closedLoop: {
      rounds: closed.map((r) => ({
        loadAverage: r.loadAverage,
        spin: brief(r.spin),
        hello: brief(r.hello),
        ratio: Math.round(r.ratio * 1000) / 1000,
      })),
      medianSpinsPerSecond: Math.round(saturation),
      medianHelloPerSecond: Math.round(median(closed.map((r) => r.hello.perSecond))),
      medianRatio: Math.round(median(closed.map((r) => r.ratio)) * 1000) / 1000,
    },
    fixedRate: fixed.map((f) => ({
      fractionOfSaturation: f.fraction,
      loadAverage: f.loadAverage,
      targetPerSecond: f.result.targetPerSecond,
      ...brief(f.result),
    })),
    apiCpuUsPerSpin: perRequestUs(cpuBefore.api, cpuAfter.api, closedSpins),
    postgresBackendsCpuUsPerSpin: backends.length ? perRequestUs(cpuBefore.pg, cpuAfter.pg, closedSpins) : null,
    helloCpuUsPerRequest: perRequestUs(cpuBefore.hello, cpuAfter.hello, closedHellos),
    apiPeakRssMb: apiPeakRss,
    blockGeneration: {
      oneBlock: generation.oneBlock,
      targetFill: { blocks: TARGET_READY_BLOCKS, ...generation.targetFill },
      seedFill: { ...seeded.fill, outcomesPerSecond: (seeded.fill.outcomes / seeded.fill.ms) * 1000 },
    },
    consistency: { served, spinRows: rows?.n ?? null, queueFell: queuedBefore - queuedAfter, consistent, errors },
  };
  writeJson("bench-results/latest.json", results);
  const points = [
    ...fixed.map((f) => ({ label: `${f.fraction * 100}%`, ...f.result })),
    ...closed.map((r) => ({ label: "closed", ...r.spin })),
  ];
  writeSvg(
    "bench-results/latency.svg",
    latencySvg(`POST /spins latency vs load (${cpus().length} cores, load avg ${loadBefore})`, points),
  );
  console.log(JSON.stringify(results, null, 2));
  console.log("\nwritten: bench-results/latest.json, bench-results/latency.svg");
  if (!consistent || errors > 0) process.exitCode = 1;
} finally {
  for (const child of children) await stop(child);
  const stale = await redis.keys(`${prefix}:*`);
  if (stale.length > 0) await redis.del(...stale);
  await redis.quit();
  await database.close();
  await dropBenchDatabase();
}
