import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { parseArgs } from "node:util";
import { CURRENT_RELEASE } from "@outcomes/core";
import { createDatabase, finishRollout, migrateDatabase } from "@outcomes/db";
import { createWorkerRedis, deleteKeysUnder, redisKeys } from "@outcomes/queue";
import postgres from "postgres";
import { cpuOfPids, cpuSince, processCpuMs } from "./bench/cpu.js";
import { failures, runLoad } from "./bench/load.js";
import {
  createBenchGrant,
  createLargeWinGame,
  MIX_KINDS,
  type MixKind,
  mixRequest,
  protectEveryPlayer,
  replayPathOfASpin,
} from "./bench/mixes.js";
import { peakRssMb, productionNodeArgs, startProcess, stop } from "./bench/processes.js";
import { HISTORY_RECENT, seedBench, seedHistory } from "./bench/seed.js";

/**
 * `npx tsx scripts/bench-ab.ts [--rounds 5 --duration 4 --connections 64 --kinds spins] <bundle>[@--flag,…] …`
 *
 * Compares API builds by CPU per request on a busy machine: each bundle (an `apps/api/main.js` built by
 * `scripts/build.mjs`, copied under `dist/`, so it finds `node_modules`) runs as its own process with
 * the production flags, all on one seeded database and queue, and the closed-loop runs of each kind
 * (`--kinds`: any of the bench's mixes, scripts/bench/mixes.ts; reads list what a few seconds of
 * plain and large-win spins wrote first) alternate between them round after round, so every build
 * sees the same machine state. Reported per build and kind: API CPU µs per request (from /proc), that
 * of the database's Postgres backends (only the running build's are busy), the median req/s, p50
 * and p99; and each build's peak RSS. After `@`,
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
    kinds: { type: "string", default: "spins" },
    /** Days of spin history the reads find (see seedHistory). */
    "history-days": { type: "string", default: "30" },
  },
});
const kinds = args.kinds.split(",") as MixKind[];
const unknown = kinds.filter((kind) => !MIX_KINDS.includes(kind));
if (unknown.length > 0) throw new Error(`unknown kinds ${unknown.join(", ")}: name some of ${MIX_KINDS.join(", ")}`);
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
/** Plain, then large-win spins before the rounds, so the reads have rows to list. */
const FILL_MS = 6_000;

interface Figures {
  cpuMs: number;
  postgresCpuMs: number;
  requests: number;
  perSecond: number[];
  p50: number[];
  p99: number[];
}
const admin = postgres(withDatabase(baseUrl, "postgres"), { max: 1, onnotice: () => {} });

await migrateDatabase(benchUrl);
const database = createDatabase(benchUrl, { max: 2 });
const redis = createWorkerRedis({ REDIS_URL: redisUrl });
const children: ChildProcess[] = [];
try {
  const takingOutcomes = kinds.filter(
    (kind) => kind === "spins" || kind === "keyedSpins" || kind === "freeRoundSpins" || kind === "protectedSpins",
  ).length;
  const spinsNeeded = ((rounds + 1) * bundles.length * takingOutcomes * durationMs + FILL_MS) * 8;
  const seeded = await seedBench(database.db, redis, redisKeys(prefix), { outcomes: spinsNeeded, blockSize: 10_000 });
  // Measured as deployed once the rollout is finished: every release gate open.
  await finishRollout(database.db, CURRENT_RELEASE);
  const largeWinGameId = await createLargeWinGame(database.db, seeded);
  const freeRoundsId = await createBenchGrant(database.db, seeded, players);
  // The partner whose players are all checked (the `protectedSpins` kind), with outcomes of its own.
  const protectedSeed = kinds.includes("protectedSpins")
    ? await seedBench(database.db, redis, redisKeys(prefix), { outcomes: spinsNeeded, blockSize: 10_000 })
    : null;
  const historyDays = Number(args["history-days"]);
  if (historyDays > 0) await seedHistory(database.db, seeded, { players, days: historyDays, recent: HISTORY_RECENT });
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
        RATE_LIMIT_REQUESTS_PER_SECOND: "1000000",
        REPLAY_RATE_LIMIT_PER_MINUTE: "1000000",
      },
      "/readyz",
    );
    children.push(api.child);
    apis.push({ bundle, ...api, byKind: new Map<MixKind, Figures>() });
  }
  const first = apis[0] as (typeof apis)[number];
  if (protectedSeed) await protectEveryPlayer(database.db, protectedSeed, first.url, players);
  const setup = {
    protectedSpins: { apiKey: protectedSeed?.apiKey ?? "", gameId: protectedSeed?.gameId ?? 0 },
    // Set after the fill below, when replay pages are measured (a bundle from before them has none).
    replayPath: "",
    apiUrl: "",
    metricsUrl: "",
    apiKey: seeded.apiKey,
    gameId: seeded.gameId,
    largeWinGameId,
    freeRoundsId,
    players,
  };
  const load = (api: { url: string; metricsUrl: string }, kind: MixKind, run: string, ms: number) =>
    runLoad({
      ...mixRequest(kind, { ...setup, apiUrl: api.url, metricsUrl: api.metricsUrl, keyPrefix: `ab-${runId}-${run}` }),
      connections,
      durationMs: ms,
    });
  const backendPids = async () =>
    (
      await admin<{ pid: number }[]>`
        select pid from pg_stat_activity where datname = ${name} and backend_type = 'client backend'`
    ).map((row) => row.pid);
  // Rows for the reads to list besides the history: today's spins and large-win events.
  await load(first, "spins", "fill", FILL_MS / 2);
  await load(first, "largeWinSpins", "fill", FILL_MS / 2);
  // A spin of the fill: the seeded history's ids carry no time, which a lookup by id needs.
  if (kinds.includes("replayPage")) setup.replayPath = await replayPathOfASpin(first.url, seeded.apiKey);
  for (const api of apis) for (const kind of kinds) await load(api, kind, `warm-${api.url}`, 2000);
  for (let round = 0; round < rounds; round++) {
    for (const kind of kinds) {
      // Alternate the order too, so no build always runs right after the same other one.
      for (const api of round % 2 ? [...apis].reverse() : apis) {
        // The database's backends: only the running build's are busy.
        const postgresBefore = cpuOfPids(await backendPids());
        const before = processCpuMs(api.child.pid) ?? Number.NaN;
        const result = await load(api, kind, `${round}-${api.url}`, durationMs);
        if (failures(result) > 0) throw new Error(`${api.bundle} ${kind}: ${JSON.stringify(result.statuses)}`);
        const figures = api.byKind.get(kind) ?? {
          cpuMs: 0,
          postgresCpuMs: 0,
          requests: 0,
          perSecond: [],
          p50: [],
          p99: [],
        };
        figures.cpuMs += (processCpuMs(api.child.pid) ?? Number.NaN) - before;
        figures.postgresCpuMs += cpuSince(postgresBefore, cpuOfPids(await backendPids())) ?? Number.NaN;
        figures.requests += result.completed;
        figures.perSecond.push(Math.round(result.perSecond));
        figures.p50.push(Math.round(result.p50Ms * 10) / 10);
        figures.p99.push(Math.round(result.p99Ms * 10) / 10);
        api.byKind.set(kind, figures);
      }
    }
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
  for (const api of apis) {
    for (const [kind, figures] of api.byKind) {
      console.log(
        JSON.stringify({
          bundle: api.bundle,
          kind,
          apiCpuUsPerRequest: Math.round((figures.cpuMs * 1000) / figures.requests),
          postgresCpuUsPerRequest: Math.round((figures.postgresCpuMs * 1000) / figures.requests),
          perSecond: median(figures.perSecond),
          p50Ms: median(figures.p50),
          p99Ms: median(figures.p99),
          rounds: { perSecond: figures.perSecond, p99Ms: figures.p99 },
        }),
      );
    }
    console.log(JSON.stringify({ bundle: api.bundle, peakRssMb: peakRssMb(api.child.pid) }));
  }
} finally {
  for (const child of children) await stop(child);
  await deleteKeysUnder(redis, prefix);
  await redis.quit();
  await database.close();
  await admin.unsafe(`drop database if exists "${name}" with (force)`);
  await admin.end();
}
