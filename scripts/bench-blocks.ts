import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { draftOffThread, fillReserve, type ReserveDeps, treeHashing } from "@outcomes/blocks";
import {
  assertValidParSheet,
  draftBlock,
  drawIndependentBlock,
  newId,
  OutcomeDrawer,
  queuedItemsText,
  SAMPLE_PAR_SHEET,
} from "@outcomes/core";
import { createDatabase, createGame, insertParSheet, migrateDatabase, partners } from "@outcomes/db";
import { createWorkerRedis, keyServers, redisKeys } from "@outcomes/queue";
import { createLogger, parseEnv } from "@outcomes/runtime";
import postgres from "postgres";

/**
 * `npx tsx scripts/bench-blocks.ts [--block-size 10000] [--blocks 4] [--runs 7]`
 *
 * Measures outcome generation on this machine: drawing alone (binary entries from a fresh seed,
 * SHA-256 commitment, Merkle tree and queue items of the sample sheet, in memory), then the whole reserve fill against the local
 * Postgres and Redis (seal in Postgres, load into the Redis list) for fresh games: one block and a
 * fill to `--blocks` ready blocks (median of `--runs`), a finite_pool fill, and a rebuild of a lost
 * list from Postgres. Uses a database and a Redis prefix of its own and removes both.
 */
const { values } = parseArgs({
  options: {
    "database-url": {
      type: "string",
      default: process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres",
    },
    "redis-url": { type: "string", default: process.env.REDIS_URL ?? "redis://127.0.0.1:6379" },
    "block-size": { type: "string", default: "10000" },
    blocks: { type: "string", default: "4" },
    runs: { type: "string", default: "7" },
  },
});
const blockSize = Number(values["block-size"]);
const blockCount = Number(values.blocks);
const runs = Number(values.runs);
/** CPU seconds so far of each thread of this process (Linux /proc; empty elsewhere), by thread id. */
function threadCpuSeconds(): Map<string, number> {
  if (!existsSync("/proc/self/task")) return new Map();
  return new Map(
    readdirSync("/proc/self/task").map((tid) => {
      const fields = readFileSync(`/proc/self/task/${tid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
      return [tid, (Number(fields[11]) + Number(fields[12])) / 100] as const;
    }),
  );
}

/**
 * CPU seconds so far of the whole machine, all processes (Linux /proc/stat; 0 elsewhere). Per
 * outcome it includes Postgres and Redis, and tells a slow run on a busy or throttled machine
 * (more µs for the same work) from a slower program.
 */
function machineCpuSeconds(): number {
  if (!existsSync("/proc/stat")) return 0;
  const [, user, nice, system, , , irq, softirq, steal] = (readFileSync("/proc/stat", "utf8").split("\n")[0] ?? "")
    .split(/ +/)
    .map(Number);
  return ((user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0) + (steal ?? 0)) / 100;
}

/**
 * `work`'s wall time (ms) and CPU (this process's µs, each thread's and the machine's seconds). The
 * /proc reads are outside the timed span: they take ~1 ms, a few % of a fill.
 */
async function measured<T>(work: () => Promise<T>): Promise<{
  result: T;
  ms: number;
  cpuMicros: number;
  threads: Map<string, number>;
  machine: number;
}> {
  const threads = threadCpuSeconds();
  const machine = machineCpuSeconds();
  const cpu = process.cpuUsage();
  const started = performance.now();
  const result = await work();
  const ms = performance.now() - started;
  const used = process.cpuUsage(cpu);
  const after = threadCpuSeconds();
  return {
    result,
    ms,
    cpuMicros: used.user + used.system,
    threads: new Map([...after].map(([tid, seconds]) => [tid, seconds - (threads.get(tid) ?? 0)])),
    machine: machineCpuSeconds() - machine,
  };
}

/** µs of CPU per outcome of `used` (seconds by thread): the main thread, and the busiest other threads (the tree threads). */
function threadShares(used: Map<string, number>, outcomes: number): string {
  const shares = [...used]
    .map(([tid, seconds]) => [tid, (seconds * 1e6) / outcomes] as const)
    .filter(([tid, perOutcome]) => tid === String(process.pid) || perOutcome >= 0.05)
    .sort(([a], [b]) => (a === String(process.pid) ? -1 : b === String(process.pid) ? 1 : 0));
  return shares
    .map(([tid, perOutcome]) => `${tid === String(process.pid) ? "main" : "thread"} ${perOutcome.toFixed(2)}`)
    .join(", ");
}

const rate = (outcomes: number, ms: number) => `${Math.round((outcomes / ms) * 1000).toLocaleString("en")} outcomes/s`;

/**
 * Generation without I/O, best of 3 × 1,000,000 outcomes: each block drawn and turned into queue
 * items on this thread while the previous block's Merkle tree is built on the tree worker thread,
 * as the blocks worker does. Also the CPU per outcome of this process (all threads, so comparable on
 * a busy machine) and of the tree alone, built on this thread.
 */
async function drawingOnly(): Promise<string> {
  const drawer = new OutcomeDrawer(assertValidParSheet(SAMPLE_PAR_SHEET));
  const generate = async () => {
    let previous: Promise<unknown> = Promise.resolve();
    for (let outcomes = 0; outcomes < 1_000_000; outcomes += blockSize) {
      const drawn = drawIndependentBlock(drawer, blockSize);
      const tree = draftOffThread(drawer, drawn, 1);
      queuedItemsText({ entries: drawn.entries, blockId: 1 });
      await previous;
      previous = tree;
    }
    await previous;
  };
  await generate();
  let best = 0;
  let bestCpu = Number.POSITIVE_INFINITY;
  for (let run = 0; run < 3; run++) {
    const cpu = process.cpuUsage();
    const started = performance.now();
    await generate();
    best = Math.max(best, 1_000_000 / (performance.now() - started));
    const used = process.cpuUsage(cpu);
    bestCpu = Math.min(bestCpu, (used.user + used.system) / 1_000_000);
  }
  const treeCpu = process.cpuUsage();
  for (let outcomes = 0; outcomes < 1_000_000; outcomes += blockSize) {
    draftBlock(drawer, drawIndependentBlock(drawer, blockSize), 1);
  }
  const treeUsed = process.cpuUsage(treeCpu);
  return (
    `${Math.round(best * 1000).toLocaleString("en")} outcomes/s, CPU ${bestCpu.toFixed(2)} µs/outcome (all threads); ` +
    `drawn and hashed on one thread: CPU ${((treeUsed.user + treeUsed.system) / 1_000_000).toFixed(2)} µs/outcome`
  );
}

const admin = new URL(values["database-url"]);
const name = `outcomes_bench_blocks_${randomBytes(4).toString("hex")}`;
const url = new URL(admin);
url.pathname = `/${name}`;
await migrateDatabase(url.toString());
const database = createDatabase(url.toString(), { max: 4 });
const redis = createWorkerRedis(
  parseEnv({ REDIS_URL: values["redis-url"], REDIS_CLUSTER_NODES: process.env.REDIS_CLUSTER_NODES }),
);
const prefix = `bench-blocks:${randomBytes(4).toString("hex")}`;
const keys = redisKeys(prefix);
const owner = { partnerId: newId("ptr"), environment: "sandbox" as const };
await database.db.insert(partners).values({ id: owner.partnerId, slug: owner.partnerId.toLowerCase(), name: "Bench" });

let games = 0;
async function fill(drawMode: "independent" | "finite_pool", blocks = blockCount) {
  const document = { ...SAMPLE_PAR_SHEET, drawMode };
  const sheet = await insertParSheet(database.db, owner, assertValidParSheet(document), JSON.stringify(document));
  const game = await database.db.transaction((tx) =>
    createGame(tx, owner, {
      parSheetId: sheet.id,
      name: `${drawMode} ${++games}`,
      minWagerMicros: null,
      maxWagerMicros: 100_000_000,
      largeWinThresholdMicros: null,
    }),
  );
  const deps: ReserveDeps = {
    db: database.db,
    redis,
    keys,
    logger: createLogger("silent", "bench"),
    targets: { blockSize, minReadyBlocks: 1, targetReadyBlocks: blocks },
  };
  const { result, ms, cpuMicros, threads, machine } = await measured(() => fillReserve(deps, game.id));
  return {
    threads,
    machine,
    game,
    deps,
    rate: (result.outcomesSealed / ms) * 1000,
    cpu: cpuMicros / result.outcomesSealed,
    line: `${drawMode}: ${result.outcomesSealed} outcomes sealed and loaded in ${Math.round(ms)} ms, ${rate(result.outcomesSealed, ms)}`,
  };
}

try {
  console.log(`Merkle trees: ${treeHashing.hasher}`);
  console.log(`drawing and hashing, no I/O (sample sheet, best of 3 × 1,000,000): ${await drawingOnly()}`);
  // A worker process is warm after its first jobs: three unmeasured fills compile the hot paths.
  for (let warmup = 0; warmup < 3; warmup++) await fill("independent", blockCount);
  const median = async (blocks: number) => {
    const rates: number[] = [];
    const cpus: number[] = [];
    const threads = new Map<string, number>();
    let machine = 0;
    for (let run = 0; run < runs; run++) {
      const filled = await fill("independent", blocks);
      rates.push(filled.rate);
      cpus.push(filled.cpu);
      for (const [tid, seconds] of filled.threads) threads.set(tid, (threads.get(tid) ?? 0) + seconds);
      machine += filled.machine;
    }
    rates.sort((a, b) => a - b);
    cpus.sort((a, b) => a - b);
    const shown = rates.map((value) => Math.round(value / 1000)).join(" / ");
    const cpu = (cpus[Math.floor(runs / 2)] ?? 0).toFixed(2);
    const outcomes = runs * blocks * blockSize;
    const machineCpu = ((machine * 1e6) / outcomes).toFixed(2);
    return `median ${Math.round(rates[Math.floor(runs / 2)] ?? 0).toLocaleString("en")} outcomes/s (runs, thousands/s: ${shown}); this process's CPU ${cpu} µs/outcome (all threads; by thread: ${threadShares(threads, outcomes)}); the machine's ${machineCpu} µs/outcome (every process, Postgres and Redis included; /proc/stat counts in 10 ms steps)`;
  };
  console.log(`one block of ${blockSize}, fresh game: ${await median(1)}`);
  console.log(`fill to ${blockCount} blocks, fresh game: ${await median(blockCount)}`);
  const independent = await fill("independent");
  console.log(independent.line);
  console.log((await fill("finite_pool")).line);

  // One DEL per key: on a cluster a DEL of several keys must stay in one slot.
  await redis.del(keys.outcomeQueue(independent.game));
  await redis.del(keys.outcomesLoadedThrough(independent.game));
  const started = performance.now();
  const rebuilt = await fillReserve(independent.deps, independent.game.id);
  const ms = performance.now() - started;
  console.log(
    `rebuild of a lost list: ${rebuilt.rebuiltOutcomes} outcomes in ${Math.round(ms)} ms, ${rate(rebuilt.rebuiltOutcomes ?? 0, ms)}`,
  );
} finally {
  for (const server of keyServers(redis)) {
    const queued = await server.keys(`${prefix}:*`);
    for (const key of queued) await server.del(key);
  }
  await redis.quit();
  await database.close();
  const cleanup = postgres(admin.toString(), { max: 1, onnotice: () => {} });
  await cleanup.unsafe(`drop database if exists "${name}" with (force)`);
  await cleanup.end();
}
