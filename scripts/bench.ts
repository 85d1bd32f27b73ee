import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { createServer } from "node:net";
import { parseArgs } from "node:util";
import { createDatabase, migrateDatabase, spins } from "@outcomes/db";
import { createWorkerRedis, redisKeys } from "@outcomes/queue";
import { count } from "drizzle-orm";
import postgres from "postgres";
import { loadAverage, processCpuMs } from "./bench/cpu.js";
import { failures, type LoadResult, runLoad } from "./bench/load.js";
import { seedBench } from "./bench/seed.js";

/**
 * `npm run bench [-- --duration 10 --connections 32 --players 1000]`
 *
 * Seeds a throwaway database (`outcomes_bench` beside DATABASE_URL) and a Redis prefix of its own,
 * starts the API exactly as `npm run start:api` does (its own process), drives POST /spins over
 * keep-alive HTTP at a fixed concurrency for a fixed time, then a Hono hello-world the same way,
 * prints spins/s, p50/p99 and the ratio, checks every 200 is one spin row, and cleans up.
 * `--profile` also writes the API process's CPU profile to bench-results/.
 */
const { values: args } = parseArgs({
  options: {
    duration: { type: "string", default: "10" },
    warmup: { type: "string", default: "2" },
    connections: { type: "string", default: "32" },
    players: { type: "string", default: "1000" },
    outcomes: { type: "string" },
    /** Writes a V8 CPU profile of the API process to bench-results/ (open it in Chrome DevTools). */
    profile: { type: "boolean", default: false },
  },
});
const durationMs = Number(args.duration) * 1000;
const warmupMs = Number(args.warmup) * 1000;
const connections = Number(args.connections);
const players = Number(args.players);
// Enough for 10,000 spins/s throughout: the queue must never run dry during a run.
const outcomes = Number(args.outcomes ?? Math.ceil(((durationMs + warmupMs) / 1000) * 10_000));

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

async function freePort(): Promise<number> {
  const server = createServer().listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as { port: number };
  server.close();
  return port;
}

/** Starts `tsx <entry>` with the given env and waits until `readyPath` answers 200. */
async function startProcess(entry: string, env: Record<string, string>, readyPath: string, nodeArgs: string[] = []) {
  const port = await freePort();
  const child = spawn(process.execPath, [...nodeArgs, "--import", "tsx", entry], {
    env: { ...process.env, ...env, PORT: String(port) },
    stdio: ["ignore", "inherit", "inherit"],
  });
  const url = `http://127.0.0.1:${port}`;
  for (let tries = 0; tries < 300; tries++) {
    if (child.exitCode !== null) throw new Error(`${entry} exited with ${child.exitCode}`);
    const ok = await fetch(url + readyPath).then(
      (response) => response.ok,
      () => false,
    );
    if (ok) return { child, url };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${entry} did not become ready`);
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  child.kill("SIGTERM");
  await once(child, "exit");
}

/** CPU time used so far by some processes together; null when it cannot be read. */
function cpuMsOf(pids: Array<number | undefined>): number | null {
  const each = pids.map(processCpuMs);
  return each.some((ms) => ms === null) ? null : each.reduce<number>((sum, ms) => sum + (ms ?? 0), 0);
}

/** Runs a load and measures the CPU time the given processes used over it, per request. */
async function measured(pids: Array<number | undefined>, run: () => Promise<LoadResult>) {
  const before = cpuMsOf(pids);
  const result = await run();
  const after = cpuMsOf(pids);
  const perRequest = (from: number | null, to: number | null) =>
    from === null || to === null ? null : ((to - from) * 1000) / Math.max(1, result.completed);
  return { ...result, cpuUsPerRequest: perRequest(before, after) };
}

/** The Postgres backends serving the API's pool (open after the warm-up); none when Postgres is remote. */
async function apiBackendPids(sql: postgres.Sql): Promise<number[]> {
  if (!["127.0.0.1", "localhost", "[::1]"].includes(new URL(benchUrl).hostname)) return [];
  const rows = await sql<{ pid: number }[]>`
    select pid from pg_stat_activity where datname = 'outcomes_bench' and pid <> pg_backend_pid()`;
  return rows.map((row) => row.pid);
}

function line(name: string, result: LoadResult & { cpuUsPerRequest: number | null }): string {
  const cells = [
    name.padEnd(12),
    `${Math.round(result.perSecond)}/s`.padStart(9),
    `p50 ${result.p50Ms.toFixed(2)} ms`.padStart(14),
    `p99 ${result.p99Ms.toFixed(2)} ms`.padStart(14),
    `max ${result.maxMs.toFixed(1)} ms`.padStart(14),
    `errors ${failures(result)}`.padStart(10),
    `server CPU ${result.cpuUsPerRequest === null ? "?" : Math.round(result.cpuUsPerRequest)} µs/req`.padStart(22),
    JSON.stringify(result.statuses),
  ];
  return cells.join("  ");
}

await dropBenchDatabase();
await migrateDatabase(benchUrl);
const database = createDatabase(benchUrl, { max: 2 });
const redis = createWorkerRedis(redisUrl);
const children: ChildProcess[] = [];
try {
  const keys = redisKeys(prefix);
  const seeded = await seedBench(database.db, redis, keys, { outcomes, blockSize: 10_000 });
  const queuedBefore = await redis.llen(keys.outcomeQueue(seeded.gameId));

  const api = await startProcess(
    "apps/api/src/main.ts",
    {
      DATABASE_URL: benchUrl,
      REDIS_URL: redisUrl,
      REDIS_PREFIX: prefix,
      LOG_LEVEL: "warn",
      RATE_LIMIT_SPINS_PER_SECOND: "1000000",
    },
    "/readyz",
    args.profile ? ["--cpu-prof", "--cpu-prof-dir", "bench-results"] : [],
  );
  children.push(api.child);
  const spinLoad = (ms: number) =>
    runLoad({
      url: `${api.url}/api/partner/v1/spins`,
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": seeded.apiKey },
      body: JSON.stringify({ gameId: seeded.gameId, playerId: "player-{n}", wagerUsd: 1 }),
      distinct: players,
      connections,
      durationMs: ms,
    });
  const warm = await spinLoad(warmupMs);
  const loadBefore = loadAverage();
  const backends = await apiBackendPids(database.sql);
  const backendCpuBefore = cpuMsOf(backends);
  const spinResult = await measured([api.child.pid], () => spinLoad(durationMs));
  const backendCpuAfter = cpuMsOf(backends);
  await stop(api.child);

  const hello = await startProcess("scripts/bench/hello.ts", {}, "/hello");
  children.push(hello.child);
  const helloLoad = (ms: number) =>
    runLoad({ url: `${hello.url}/hello`, method: "GET", headers: {}, connections, durationMs: ms });
  await helloLoad(warmupMs);
  const helloResult = await measured([hello.child.pid], () => helloLoad(durationMs));

  // Every 200 is exactly one spin row and one outcome gone from the queue: nothing lost or doubled.
  const served = (warm.statuses["200"] ?? 0) + (spinResult.statuses["200"] ?? 0);
  const [rows] = await database.db.select({ n: count() }).from(spins);
  const queuedAfter = await redis.llen(keys.outcomeQueue(seeded.gameId));
  const consistent = rows?.n === served && queuedBefore - queuedAfter === served;

  console.log(`\nPOST /spins vs Hono hello-world: ${connections} connections, ${durationMs / 1000} s each`);
  console.log(`(${players} players, ${queuedBefore} outcomes queued, ${warmupMs / 1000} s warm-up not counted)`);
  console.log(`1-minute load average before the run: ${loadBefore} (above the core count, other work competed)\n`);
  console.log(line("POST /spins", spinResult));
  console.log(line("hello-world", helloResult));
  console.log(`\nspins/s ÷ hello/s: ${(spinResult.perSecond / helloResult.perSecond).toFixed(3)}`);
  if (backends.length > 0 && backendCpuBefore !== null && backendCpuAfter !== null) {
    const perSpin = ((backendCpuAfter - backendCpuBefore) * 1000) / Math.max(1, spinResult.completed);
    console.log(
      `Postgres CPU per spin (the API's ${backends.length} backends, not WAL writer): ${Math.round(perSpin)} µs`,
    );
  }
  console.log(
    `consistency: ${served} spins answered 200, ${rows?.n} spin rows, queue fell by ${queuedBefore - queuedAfter}`,
  );
  if (!consistent || failures(spinResult) > 0) process.exitCode = 1;
} finally {
  for (const child of children) await stop(child);
  const stale = await redis.keys(`${prefix}:*`);
  if (stale.length > 0) await redis.del(...stale);
  await redis.quit();
  await database.close();
  await dropBenchDatabase();
}
