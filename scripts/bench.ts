import { type ChildProcess, execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync, rmSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { CURRENT_RELEASE, codecOfBlockHead, parseQueueItem, presentationOf, queueItemOutcome } from "@outcomes/core";
import {
  blocks,
  createDatabase,
  createGame,
  events,
  finishRollout,
  freeRoundSpins,
  migrateDatabase,
  spins,
} from "@outcomes/db";
import { createWorkerRedis, deleteKeysUnder, type RedisClient, redisKeys } from "@outcomes/queue";
import { parseEnv } from "@outcomes/runtime";
import { and, count, eq, sql } from "drizzle-orm";
import { Redis } from "ioredis";
import postgres from "postgres";
import { childrenOf } from "../tests/faults/harness/processes.js";
import { measureGeneration } from "./bench/blocks.js";
import { loadAverage, processCpuMs } from "./bench/cpu.js";
import { failures, type LoadResult, runLoad } from "./bench/load.js";
import {
  createBenchGrant,
  createLargeWinGame,
  MIX_KINDS,
  type MixKind,
  mixRequest,
  protectEveryPlayer,
  replayPathOfASpin,
  runMixRounds,
  summariseMixes,
} from "./bench/mixes.js";
import { type FixedRateResult, runFixedRate } from "./bench/open-loop.js";
import { findPgbench, type PgbenchResult, type PgbenchScript, runPgbench, spinShapedScript } from "./bench/pgbench.js";
import { peakRssMb, productionNodeArgs, startProcess, stop } from "./bench/processes.js";
import { latencySvg, writeJson, writeSvg } from "./bench/report.js";
import { HISTORY_RECENT, seedBench, seedHistory } from "./bench/seed.js";
import { type TailSample, tailSampler } from "./bench/tail.js";

/**
 * `npm run bench [-- --rounds 3 --duration 4 --fixed-duration 8 --connections 32,64 --players 1000]`
 *
 * Seeds a throwaway database (`outcomes_bench_<run id>` beside DATABASE_URL) and a Redis prefix of its own,
 * starts the API exactly as `npm run start:api` does (plus a probe of its event loop and GC), a
 * plain `node:http` JSON echo and a Hono app (hello-world GET, JSON echo POST), each its own
 * process alive throughout, then:
 * 1. closed loop, `--rounds` rounds; each round runs, at every connection count: spins, pgbench
 *    with a spin-shaped transaction on the same Postgres and tables (the anchor), the node:http
 *    echo; and the Hono echo at the highest count. Reported: medians per figure, the ratios
 *    spins ÷ pgbench and spins ÷ echo of the same rounds, p99 at the highest count, and where the
 *    tail comes from (event-loop delay, GC, batch commits, Postgres waits and statements);
 * 2. open loop at 50% and 80% of the spin saturation at the highest count: p50/p99/p99.9 measured
 *    from each request's scheduled send time (no coordinated omission);
 * 3. CPU per request of each process (API, its Postgres backends, echo servers, the load client),
 *    the API's peak RSS;
 * 4. the mixes (scripts/bench/mixes.ts), `--rounds` rounds at `--mix-connections`: plain spins, keyed
 *    spins, forced top-tier spins each raising a large-win event, a player's spins, the event log, a
 *    game's blocks and `/metrics`, one run each; every kind's req/s ÷ the same round's plain spins/s;
 * 5. block generation with the blocks worker's code: one 10,000-outcome block, a TARGET fill;
 * 6. webhook deliveries by one webhooks worker process (scripts/bench-webhooks.ts, 20,000 events);
 * then checks that every 200 is one spin row and one outcome gone (a large-win spin: one spin row and
 * one event, no outcome), writes bench-results/latest.json,
 * docs/bench-results.json and bench-results/latency.svg, and cleans up. `--profile` writes the
 * API's V8 CPU profile.
 */
const { values: args } = parseArgs({
  options: {
    rounds: { type: "string", default: "3" },
    duration: { type: "string", default: "4" },
    "fixed-duration": { type: "string", default: "8" },
    warmup: { type: "string", default: "2" },
    connections: { type: "string", default: "32,64" },
    players: { type: "string", default: "1000" },
    "generation-repeats": { type: "string", default: "5" },
    profile: { type: "boolean", default: false },
    /** Spins only (no anchors, open loop, mixes or generation): for comparing levers by CPU per spin. */
    "spins-only": { type: "boolean", default: false },
    /** The mixes only (no closed-loop spin rounds, anchors, open loop or generation): a quick A/B of them. */
    "mixes-only": { type: "boolean", default: false },
    "mix-connections": { type: "string", default: "24" },
    /** Days of spin history the reads find (a spin a day per player, a partition per day; see seedHistory). */
    "history-days": { type: "string", default: "30" },
    /** API processes on the port (WEB_CONCURRENCY); CPU and RSS are summed over all of them. */
    "web-concurrency": { type: "string", default: "1" },
  },
});
const spinsOnly = args["spins-only"];
const mixesOnly = args["mixes-only"];
if (spinsOnly && mixesOnly) throw new Error("--spins-only and --mixes-only exclude each other");
/** Only the plain spin rounds, or only the mixes: no anchors, echo servers, open loop or generation. */
const partial = spinsOnly || mixesOnly;
const mixConnections = Number(args["mix-connections"]);
const rounds = Number(args.rounds);
const durationMs = Number(args.duration) * 1000;
const fixedMs = Number(args["fixed-duration"]) * 1000;
const warmupMs = Number(args.warmup) * 1000;
const connectionCounts = args.connections.split(",").map(Number);
const peakConnections = Math.max(...connectionCounts);
const players = Number(args.players);
const BLOCK_SIZE = 10_000;
const TARGET_READY_BLOCKS = 4;
// Enough for 15,000 spins/s throughout every run taking outcomes: the queue must never run dry.
const spinRounds = mixesOnly ? 0 : rounds;
const mixRounds = spinsOnly ? 0 : rounds;
const spinSeconds =
  (warmupMs + spinRounds * connectionCounts.length * durationMs + (partial ? 0 : 2 * fixedMs)) / 1000 +
  // plain and keyed spins take outcomes, in the mixes' warm-up too
  (mixRounds > 0 ? (2 * (warmupMs + mixRounds * durationMs)) / 1000 : 0);
const outcomes = Math.ceil(spinSeconds * 15_000);

const baseUrl = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/outcomes";
const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const runId = randomBytes(4).toString("hex");
// Names of this run's own: two benches on one server must not drop each other's database.
const BENCH_DATABASE = `outcomes_bench_${runId}`;
const benchUrl = withDatabase(baseUrl, BENCH_DATABASE);
const prefix = `bench:${runId}`;
const probeFile = join(tmpdir(), `bench-probe-${process.pid}.json`);

function withDatabase(url: string, name: string): string {
  const next = new URL(url);
  next.pathname = `/${name}`;
  return next.toString();
}

/**
 * One webhooks worker's deliveries/s and CPU per delivery (scripts/bench-webhooks.ts, 20,000
 * events), run after the API's runs so they do not share the machine.
 */
function benchWebhooks(): Record<string, number | boolean | string | null> {
  const file = join(tmpdir(), `bench-webhooks-${runId}.json`);
  const bench = ["--import", "tsx", "scripts/bench-webhooks.ts", "--events", "20000", "--json", file];
  try {
    execFileSync(process.execPath, bench, { stdio: ["ignore", "ignore", "inherit"] });
    return JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    // The run's other figures still stand; this one says why it is missing.
    return { failed: String((error as Error).message).slice(0, 300) };
  } finally {
    rmSync(file, { force: true });
  }
}

async function dropBenchDatabase(): Promise<void> {
  const admin = postgres(withDatabase(baseUrl, "postgres"), { max: 1, onnotice: () => {} });
  await admin.unsafe(`drop database if exists "${BENCH_DATABASE}" with (force)`);
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
    select pid from pg_stat_activity where datname = ${BENCH_DATABASE} and pid <> pg_backend_pid()
      and application_name <> 'pgbench' and backend_type = 'client backend'`;
  return rows.map((row) => row.pid);
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};
const round1 = (n: number) => Math.round(n * 10) / 10;
const ratio = (a: number, b: number) => (b > 0 ? Math.round((a / b) * 1000) / 1000 : null);
const brief = (r: LoadResult | FixedRateResult) => ({
  perSecond: Math.round(r.perSecond),
  p50Ms: round1(r.p50Ms),
  p99Ms: round1(r.p99Ms),
  p999Ms: round1(r.p999Ms),
  maxMs: round1(r.maxMs),
  statuses: r.statuses,
});

/** The pid of the Redis server when it is one server on this machine (its CPU is then readable). */
async function localRedisPid(redis: RedisClient): Promise<number | null> {
  if (!(redis instanceof Redis) || !["127.0.0.1", "localhost", "::1"].includes(redis.options.host ?? "")) return null;
  const match = /process_id:(\d+)/.exec(await redis.info("server"));
  return match ? Number(match[1]) : null;
}

/** CPU of some processes (and of this one, the load client) over the runs it wraps, per request. */
class CpuMeter {
  private ms = 0;
  private clientMs = 0;
  private requests = 0;
  constructor(private readonly pids: () => Array<number | undefined>) {}
  async measure<T extends { completed: number }>(run: () => Promise<T>): Promise<T> {
    const before = cpuMsOf(this.pids());
    const client = process.cpuUsage();
    const result = await run();
    const after = cpuMsOf(this.pids());
    const used = process.cpuUsage(client);
    this.ms += before === null || after === null ? Number.NaN : after - before;
    this.clientMs += (used.user + used.system) / 1000;
    this.requests += result.completed;
    return result;
  }
  /** Null figures when it measured no request (e.g. the spin rounds with `--mixes-only`). */
  perRequestUs(): { server: number | null; client: number | null } {
    if (this.requests === 0) return { server: null, client: null };
    const per = (ms: number) => Math.round((ms * 1000) / this.requests);
    return { server: Number.isNaN(this.ms) ? null : per(this.ms), client: per(this.clientMs) };
  }
}

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
  // Measured as deployed once the rollout is finished: every release gate open (replay pages among them).
  await finishRollout(database.db, CURRENT_RELEASE);
  const queuedBefore = await redis.llen(keys.outcomeQueue(seeded.game));
  const largeWinGameId = await createLargeWinGame(database.db, seeded);
  // A second partner, every one of whose spins is checked by player protection (its own outcomes).
  const protectedSeed =
    mixRounds > 0
      ? await seedBench(database.db, redis, keys, { outcomes: Math.ceil(outcomes / 2), blockSize: BLOCK_SIZE })
      : null;
  const freeRoundsId = await createBenchGrant(database.db, seeded, players);
  const historyDays = Number(args["history-days"]);
  if (mixRounds > 0 && historyDays > 0) {
    step(`seeding ${historyDays} days of spin history`);
    await seedHistory(database.db, seeded, { players, days: historyDays, recent: HISTORY_RECENT });
  }
  await database.db.execute(sql`create extension if not exists pg_stat_statements`).catch(() => {
    step("pg_stat_statements unavailable: no per-statement figures");
  });

  // The anchor: a spin-shaped transaction on the same tables, for a game of its own (its rows are
  // not the service's spins), numbering its outcomes far past any real block's.
  const pgbench: ReturnType<typeof findPgbench> = partial
    ? { unavailable: spinsOnly ? "--spins-only" : "--mixes-only" }
    : findPgbench(step);
  let pgbenchScript: PgbenchScript | null = null;
  if ("path" in pgbench) {
    const game = await database.db.transaction((tx) =>
      createGame(
        tx,
        { partnerId: seeded.partnerId, environment: "sandbox" },
        {
          parSheetId: seeded.parSheetId,
          name: "pgbench anchor",
          minWagerMicros: null,
          maxWagerMicros: 100_000_000,
          largeWinThresholdMicros: null,
        },
      ),
    );
    const item = await redis.lindex(keys.outcomeQueue(seeded.game), 0);
    if (!item) throw new Error("the seeded queue is empty");
    const parsed = parseQueueItem(item);
    const [stored] = await database.db
      .select({ entries: blocks.entries })
      .from(blocks)
      .where(eq(blocks.id, parsed.blockId));
    const outcome = {
      ...queueItemOutcome(parsed, codecOfBlockHead(stored?.entries ?? Buffer.alloc(0))),
      blockId: parsed.blockId,
    };
    await database.db.execute(sql`create sequence pgbench_outcome_index start 1000000000`);
    pgbenchScript = spinShapedScript(
      { partnerId: seeded.partnerId, gameId: game.id, blockId: outcome.blockId, presentation: presentationOf(outcome) },
      players,
    );
  } else step(`no pgbench anchor: ${pgbench.unavailable}`);

  step("building the API bundle (npm run build)");
  execFileSync(process.execPath, ["scripts/build.mjs"], { stdio: "ignore" });
  // The API exactly as `npm run start:api` runs it in production (the bundle on plain node, same
  // flags), plus the probe (one 1 ms timer: well under 1% of a core).
  const api = await startProcess(
    [
      ...(args.profile ? ["--cpu-prof", "--cpu-prof-dir", "bench-results"] : []),
      "--import",
      "./scripts/bench/probe.mjs",
      ...productionNodeArgs("start:api"),
    ],
    {
      DATABASE_URL: benchUrl,
      REDIS_URL: redisUrl,
      REDIS_CLUSTER_NODES: process.env.REDIS_CLUSTER_NODES ?? "",
      REDIS_PREFIX: prefix,
      LOG_LEVEL: "warn",
      RATE_LIMIT_SPINS_PER_SECOND: "1000000",
      RATE_LIMIT_REQUESTS_PER_SECOND: "1000000",
      REPLAY_RATE_LIMIT_PER_MINUTE: "1000000",
      WEB_CONCURRENCY: args["web-concurrency"],
      BENCH_PROBE_FILE: probeFile,
    },
    "/readyz",
  );
  children.push(api.child);
  const hono = await startProcess(["--import", "tsx", "scripts/bench/hello.ts"], {}, "/hello");
  children.push(hono.child);
  const echo = await startProcess(["--import", "tsx", "scripts/bench/echo.ts"], {}, "/echo");
  children.push(echo.child);

  const spinTarget = {
    url: `${api.url}/api/partner/v1/spins`,
    method: "POST" as const,
    headers: { "content-type": "application/json", "x-api-key": seeded.apiKey },
    body: JSON.stringify({ gameId: seeded.gameId, playerId: "player-{n}", wagerUsd: 1 }),
    distinct: players,
  };
  const echoTarget = (url: string) => ({
    url,
    method: "POST" as const,
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ gameId: seeded.gameId, playerId: "player-{n}", wagerUsd: 1 }),
    distinct: players,
  });
  const spinLoad = (connections: number, ms: number) => runLoad({ ...spinTarget, connections, durationMs: ms });
  const echoLoad = (connections: number, ms: number) =>
    runLoad({ ...echoTarget(`${echo.url}/echo`), connections, durationMs: ms });
  const honoLoad = (connections: number, ms: number) =>
    runLoad({ ...echoTarget(`${hono.url}/echo`), connections, durationMs: ms });

  step("warm-up");
  const warm = await spinLoad(peakConnections, warmupMs);
  if (!partial) {
    await echoLoad(peakConnections, warmupMs);
    await honoLoad(peakConnections, warmupMs);
  }
  const backends = await apiBackendPids(database.sql);
  // With WEB_CONCURRENCY > 1 the API is a primary and its forked API processes.
  const apiPids = () => [api.child.pid, ...childrenOf(api.child.pid)];
  const apiCpu = new CpuMeter(apiPids);
  // The Redis server's own CPU, where it runs on this machine (one server; null on a cluster).
  const redisPid = await localRedisPid(redis);
  const redisCpu = new CpuMeter(() => [redisPid ?? undefined]);
  const postgresCpu = new CpuMeter(() => backends);
  const echoCpu = new CpuMeter(() => [echo.child.pid]);
  const honoCpu = new CpuMeter(() => [hono.child.pid]);
  const loadBefore = loadAverage();

  interface AtConnections {
    connections: number;
    spin: LoadResult;
    pgbench: PgbenchResult | null;
    /** Null with `--spins-only`. */
    echo: LoadResult | null;
    tail?: TailSample;
  }
  const closed: Array<{ loadAverage: string; at: AtConnections[]; hono: LoadResult | null }> = [];
  for (let i = 0; i < spinRounds; i++) {
    const loadNow = loadAverage();
    const at: AtConnections[] = [];
    for (const connections of connectionCounts) {
      step(`round ${i + 1} of ${rounds}, ${connections} connections: spins, pgbench, node:http echo`);
      const watch = await tailSampler({ ...api, probeFile }, database.sql, BENCH_DATABASE);
      const spin = await apiCpu.measure(() =>
        postgresCpu.measure(() => redisCpu.measure(() => spinLoad(connections, durationMs))),
      );
      const tail = await watch.stop();
      const anchor =
        "path" in pgbench && pgbenchScript
          ? await runPgbench(pgbench.path, benchUrl, pgbenchScript, connections, durationMs / 1000)
          : null;
      const echoRun = partial ? null : await echoCpu.measure(() => echoLoad(connections, durationMs));
      at.push({ connections, spin, pgbench: anchor, echo: echoRun, tail });
    }
    if (!partial) step(`round ${i + 1} of ${rounds}: Hono echo, ${peakConnections} connections`);
    const honoRun = partial ? null : await honoCpu.measure(() => honoLoad(peakConnections, durationMs));
    closed.push({ loadAverage: loadNow, at, hono: honoRun });
  }
  const ofConnections = (connections: number) =>
    closed.map((round) => round.at.find((each) => each.connections === connections) as AtConnections);
  const saturation = median(ofConnections(peakConnections).map((r) => r.spin.perSecond));

  const fixed: Array<{ fraction: number; loadAverage: string; result: FixedRateResult; tail: TailSample }> = [];
  for (const fraction of partial ? [] : [0.5, 0.8]) {
    const loadNow = loadAverage();
    step(`open loop, ${fraction * 100}% of ${Math.round(saturation)} spins/s`);
    const watch = await tailSampler({ ...api, probeFile }, database.sql, BENCH_DATABASE);
    const result = await runFixedRate({
      ...spinTarget,
      ratePerSecond: Math.max(1, Math.round(saturation * fraction)),
      durationMs: fixedMs,
      // The connections the saturation was measured with: the same client, only paced.
      maxConnections: peakConnections,
    });
    fixed.push({ fraction, loadAverage: loadNow, result, tail: await watch.stop() });
  }

  // The API's peak RSS (VmHWM, summed over its processes): of the spin runs, then of the whole run
  // with the mixes (reads hold more in flight: the RSS target stays the spin runs' figure).
  const peakRssNow = () =>
    apiPids().reduce<number | null>((sum, pid) => {
      const rss = peakRssMb(pid);
      return sum === null || rss === null ? null : Math.round((sum + rss) * 10) / 10;
    }, 0);
  const apiPeakRss = mixesOnly ? null : peakRssNow();

  if (protectedSeed) await protectEveryPlayer(database.db, protectedSeed, api.url, players);
  const mixSetup = {
    protectedSpins: { apiKey: protectedSeed?.apiKey ?? "", gameId: protectedSeed?.gameId ?? 0 },
    replayPath: await replayPathOfASpin(api.url, seeded.apiKey),
    apiUrl: api.url,
    metricsUrl: api.metricsUrl,
    apiKey: seeded.apiKey,
    gameId: seeded.gameId,
    largeWinGameId,
    freeRoundsId,
    players,
  };
  const { warm: mixWarm, rounds: mixes } = await runMixRounds({
    rounds: mixRounds,
    connections: mixConnections,
    warmupMs,
    durationMs,
    request: (kind, run) => mixRequest(kind, { ...mixSetup, keyPrefix: `bench-${runId}-${run}` }),
    apiCpuMs: () => cpuMsOf(apiPids()),
    postgresPids: () => apiBackendPids(database.sql),
    loadAverage,
    step,
  });
  const mixesPeakRss = mixes.length ? peakRssNow() : null;
  for (const child of children) await stop(child);

  // Every 200 is exactly one spin row and one outcome gone from the queue: nothing lost or doubled.
  const mixServed = (kind: MixKind) =>
    (mixWarm[kind]?.statuses["200"] ?? 0) +
    mixes.reduce((sum, round) => sum + (round.runs[kind].result.statuses["200"] ?? 0), 0);
  const served =
    (warm.statuses["200"] ?? 0) +
    closed.reduce((sum, r) => sum + r.at.reduce((n, each) => n + (each.spin.statuses["200"] ?? 0), 0), 0) +
    fixed.reduce((sum, r) => sum + (r.result.statuses["200"] ?? 0), 0) +
    mixServed("spins") +
    mixServed("keyedSpins") +
    mixServed("freeRoundSpins");
  // The history's spins are forced (they took no outcome); the service's spins of this game never are.
  const [rows] = await database.db
    .select({ n: count() })
    .from(spins)
    .where(and(eq(spins.gameId, seeded.gameId), eq(spins.forced, false)));
  const queuedAfter = await redis.llen(keys.outcomeQueue(seeded.game));
  // A forced large-win spin: one spin row of its game and one `spin.large_win` event, no outcome.
  const largeWins = mixServed("largeWinSpins");
  const [largeWinRows] = await database.db.select({ n: count() }).from(spins).where(eq(spins.gameId, largeWinGameId));
  // Of that game only: a plain spin drawing the top tier is a large win too (1 in 100,000).
  const [largeWinEvents] = await database.db
    .select({ n: count() })
    .from(events)
    .where(
      and(
        eq(events.partnerId, seeded.partnerId),
        eq(events.type, "spin.large_win"),
        sql`${events.payload}->'data'->>'gameId' = ${String(largeWinGameId)}`,
      ),
    );
  // A free-round spin: one spin row of the bench game (counted in `served`) and one round used.
  const [freeRoundRows] = await database.db
    .select({ n: count() })
    .from(freeRoundSpins)
    .where(eq(freeRoundSpins.grantId, freeRoundsId));
  const consistent =
    freeRoundRows?.n === mixServed("freeRoundSpins") &&
    rows?.n === served &&
    queuedBefore - queuedAfter === served &&
    largeWinRows?.n === largeWins &&
    largeWinEvents?.n === largeWins;
  const errors =
    closed.reduce((sum, r) => sum + r.at.reduce((n, each) => n + failures(each.spin), 0), 0) +
    fixed.reduce((sum, r) => sum + failures(r.result), 0) +
    mixes.reduce((sum, round) => sum + MIX_KINDS.reduce((n, kind) => n + failures(round.runs[kind].result), 0), 0) +
    Object.values(mixWarm).reduce((sum, result) => sum + failures(result), 0);

  let generation: Awaited<ReturnType<typeof measureGeneration>> | null = null;
  if (!mixesOnly) {
    step("block generation");
    // The spin rounds left fresh rows: flush them first, so a checkpoint (or autovacuum) started by
    // the load does not land in the middle of the generation runs.
    await database.db.execute(sql`checkpoint`).catch(() => step("checkpoint skipped: needs pg_checkpoint"));
    await database.db.execute(sql`vacuum (analyze) spins`);
    generation = await measureGeneration(database.db, redis, keys, seeded, {
      blockSize: BLOCK_SIZE,
      targetBlocks: TARGET_READY_BLOCKS,
      repeats: spinsOnly ? 1 : Number(args["generation-repeats"]),
    });
  }

  // None with --mixes-only.
  const byConnections = (closed.length ? connectionCounts : []).map((connections) => {
    const runs = ofConnections(connections);
    const spinsPerSecond = median(runs.map((r) => r.spin.perSecond));
    const anchors = runs.map((r) => r.pgbench?.tps ?? 0);
    const pgbenchTps = anchors.every((tps) => tps > 0) ? median(anchors) : null;
    const echoes = runs.flatMap((r) => (r.echo ? [r.echo.perSecond] : []));
    const echoPerSecond = echoes.length ? Math.round(median(echoes)) : null;
    return {
      connections,
      spinsPerSecond: Math.round(spinsPerSecond),
      spinP50Ms: round1(median(runs.map((r) => r.spin.p50Ms))),
      spinP99Ms: round1(median(runs.map((r) => r.spin.p99Ms))),
      pgbenchTps,
      echoPerSecond,
      // Per round (same machine state), then the median of the rounds.
      spinsOverPgbench: pgbenchTps ? median(runs.map((r) => ratio(r.spin.perSecond, r.pgbench?.tps ?? 0) ?? 0)) : null,
      spinsOverEcho: echoPerSecond
        ? median(runs.map((r) => ratio(r.spin.perSecond, r.echo?.perSecond ?? 0) ?? 0))
        : null,
      rounds: runs.map((r) => ({
        spin: brief(r.spin),
        pgbench: r.pgbench,
        echo: r.echo && brief(r.echo),
        tail: r.tail,
      })),
    };
  });
  const peak = byConnections.find((each) => each.connections === peakConnections);
  const mixSummary = mixes.length ? { ...summariseMixes(mixes, mixConnections), apiPeakRssMb: mixesPeakRss } : null;
  const webhooks = partial ? null : benchWebhooks();
  const results = {
    date: new Date().toISOString(),
    machine: { cpus: cpus().length, loadAverageAtStart: loadAtStart, loadAverageBeforeRuns: loadBefore },
    settings: {
      rounds,
      durationS: durationMs / 1000,
      fixedDurationS: fixedMs / 1000,
      connections: connectionCounts,
      players,
      mixConnections,
      historyDays: mixRounds > 0 ? historyDays : null,
      webConcurrency: Number(args["web-concurrency"]),
      pgbench: "path" in pgbench ? "spin-shaped transaction, -M prepared, 2 threads" : pgbench.unavailable,
    },
    targets: {
      spinsOverPgbench: Object.fromEntries(byConnections.map((each) => [each.connections, each.spinsOverPgbench])),
      p99MsClosedLoopAtPeak: peak?.spinP99Ms ?? null,
      p99MsOpenLoopAt80: round1(fixed.find((f) => f.fraction === 0.8)?.result.p99Ms ?? Number.NaN),
      apiPeakRssMb: apiPeakRss,
      // Each kind's req/s ÷ plain spins/s, same clients, same round (median of the rounds).
      mixesOverSpins: mixSummary
        ? Object.fromEntries(
            MIX_KINDS.filter((kind) => kind !== "spins").map((kind) => [kind, mixSummary.kinds[kind].overSpins]),
          )
        : null,
      webhookDeliveriesPerSecond: webhooks?.perSecond ?? null,
      webhookWorkerCpuUsPerDelivery: webhooks?.workerCpuUsPerDelivery ?? null,
    },
    closedLoop: byConnections,
    webhooks,
    mixes: mixSummary,
    honoEcho: partial
      ? null
      : {
          connections: peakConnections,
          perSecond: Math.round(median(closed.map((r) => r.hono?.perSecond ?? 0))),
          rounds: closed.map((r) => r.hono && brief(r.hono)),
        },
    loadAverages: closed.map((r) => r.loadAverage),
    fixedRate: fixed.map((f) => ({
      fractionOfSaturation: f.fraction,
      loadAverage: f.loadAverage,
      targetPerSecond: f.result.targetPerSecond,
      ...brief(f.result),
      tail: f.tail,
    })),
    cpuUsPerRequest: {
      api: apiCpu.perRequestUs().server,
      apiPostgresBackends: backends.length ? postgresCpu.perRequestUs().server : null,
      redisServer: redisPid === null ? null : redisCpu.perRequestUs().server,
      loadClientPerSpin: apiCpu.perRequestUs().client,
      nodeEcho: partial ? null : echoCpu.perRequestUs().server,
      honoEcho: partial ? null : honoCpu.perRequestUs().server,
      loadClientPerEcho: partial ? null : echoCpu.perRequestUs().client,
    },
    apiPeakRssMb: apiPeakRss,
    blockGeneration: generation && {
      oneBlock: generation.oneBlock,
      targetFill: { blocks: TARGET_READY_BLOCKS, ...generation.targetFill },
      seedFill: { ...seeded.fill, outcomesPerSecond: (seeded.fill.outcomes / seeded.fill.ms) * 1000 },
    },
    consistency: {
      served,
      spinRows: rows?.n ?? null,
      queueFell: queuedBefore - queuedAfter,
      largeWins,
      largeWinSpinRows: largeWinRows?.n ?? null,
      largeWinEvents: largeWinEvents?.n ?? null,
      consistent,
      errors,
    },
  };
  writeJson("bench-results/latest.json", results);
  if (!partial) writeJson("docs/bench-results.json", results);
  const points = [
    ...fixed.map((f) => ({ label: `${f.fraction * 100}%`, ...f.result })),
    ...closed.flatMap((r) => r.at.map((each) => ({ label: `closed ${each.connections}`, ...each.spin }))),
  ];
  writeSvg(
    "bench-results/latency.svg",
    latencySvg(`POST /spins latency vs load (${cpus().length} cores, load avg ${loadBefore})`, points),
  );
  const mixLines = mixSummary
    ? Object.fromEntries(MIX_KINDS.map((kind) => [kind, { ...mixSummary.kinds[kind], rounds: undefined }]))
    : null;
  console.log(
    JSON.stringify({ targets: results.targets, cpuUsPerRequest: results.cpuUsPerRequest, mixes: mixLines }, null, 2),
  );
  const written = [
    "bench-results/latest.json",
    ...(partial ? [] : ["docs/bench-results.json"]),
    "bench-results/latency.svg",
  ];
  console.log(`\nwritten: ${written.join(", ")}`);
  if (!consistent || errors > 0) process.exitCode = 1;
} finally {
  for (const child of children) await stop(child);
  rmSync(probeFile, { force: true });
  await deleteKeysUnder(redis, prefix);
  await redis.quit();
  await database.close();
  await dropBenchDatabase();
}
