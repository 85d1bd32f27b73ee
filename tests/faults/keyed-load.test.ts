import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectLedgerIntact, expectOutcomesIntact } from "./harness/expect-intact.js";
import type { World } from "./harness/http.js";
import { checkKeyedSpins, checkLedger, checkOutcomes } from "./harness/invariants.js";
import { type PhaseFigures, SpinLoad, type SpinRecord, uncleanWhileRedisFails } from "./harness/load.js";
import { sleep } from "./harness/processes.js";
import { PrivateRedis } from "./harness/redis-server.js";
import { type Stack, startWorld } from "./harness/stack.js";

/** The API's pool has 10 connections (apps/api/src/main.ts): four times as many keyed clients. */
const CLIENTS = 40;
/** A request not answered within this counts as hung. */
const ANSWER_BOUND_MS = 15_000;
/** "Serves spins again within seconds": from the fault (or the restart) to the first 200. */
const RECOVERY_BOUND_MS = 10_000;

let redis: PrivateRedis;
let stack: Stack;
let world: World;

beforeAll(async () => {
  // A private Redis: this file flushes it, and the machine's Redis is shared.
  redis = await PrivateRedis.start();
  ({ stack, world } = await startWorld({ stack: { redisUrl: redis.url }, apiName: "api-setup" }));
  // The setup process has the key and the game cached: the test starts a process that has neither.
  await stack.apiProcess.kill("SIGTERM");
});
afterAll(async () => {
  await stack?.close();
  await redis?.stop();
});

const hung = (records: SpinRecord[]) => records.filter((record) => record.status === "timeout");
const line = (phase: string, figures: PhaseFigures, extra = "") =>
  console.log(`KEYED-LOAD ${phase}: ${JSON.stringify(figures)}${extra}`);

describe(`${CLIENTS} concurrent keyed spin clients on a 10-connection API pool, across faults`, () => {
  it("answers every request through a cold start, a game-cache expiry, a Redis flush and a kill -9, then serves again within seconds", async () => {
    const load = new SpinLoad(stack.api, world, {
      clients: CLIENTS,
      keyedEvery: 1,
      timeoutMs: ANSWER_BOUND_MS,
      errorPauseMs: 100,
    });

    // 1. Cold start: a fresh API process (key, game and block caches empty) meets all 40 at once.
    const coldAt = Date.now();
    await stack.startApi("api-cold");
    const listeningAt = Date.now();
    load.start();
    await sleep(3_000);
    await load.stop();
    const cold = load.figures(coldAt, Date.now(), listeningAt);
    line("cold start", cold);
    // Checked at once: before the fix every one of these hung until the client gave up.
    expect(cold.answers).not.toHaveProperty("timeout");
    expect(cold.answers["200"] ?? 0).toBeGreaterThanOrEqual(0.9 * cold.requests);

    // 2. Game-cache expiry (1 s): every client's next spin misses the cache at the same moment.
    await sleep(1_200);
    const resumedAt = Date.now();
    load.start();
    await sleep(2_000);

    // 3. FLUSHALL under load: the outcome lists, markers and BullMQ keys are gone at once.
    const flushedAt = Date.now();
    await redis.command(["FLUSHALL"]);
    const flushOkMs = await load.recovered(flushedAt, RECOVERY_BOUND_MS);
    await sleep(1_000);

    // 4. kill -9 of the API under load, restarted on the same port.
    const killedAt = Date.now();
    await stack.apiProcess.kill("SIGKILL");
    await sleep(300);
    await stack.startApi("api-restart");
    const restartedAt = Date.now();
    const restartOkMs = await load.recovered(restartedAt, RECOVERY_BOUND_MS);
    // Partners retry keys the killed process had answered, while the others keep spinning: the new
    // process replays each from Postgres.
    const answered = load.records.filter((record) => record.status === 200 && record.sentAt < killedAt).slice(-CLIENTS);
    const replays = await Promise.all(
      answered.map((record) =>
        load.spin(record).then(
          (answer) =>
            answer.status === 200 &&
            answer.headers.get("idempotent-replayed") === "true" &&
            answer.body.spinId === record.spinId
              ? "replayed"
              : `${answer.status} ${JSON.stringify(answer.body)}`,
          (error: Error) => `no answer: ${(error.cause as { code?: string } | undefined)?.code ?? error.message}`,
        ),
      ),
    );
    await sleep(1_000);
    await load.stop();
    const stoppedAt = Date.now();

    const expiry = load.figures(resumedAt, flushedAt);
    const flush = load.figures(flushedAt, killedAt);
    const kill = load.figures(killedAt, stoppedAt);
    const outage = load.between(killedAt, restartedAt);
    const refused = outage.filter((record) => record.status === "network");
    const slowestRefusalMs = refused.reduce((max, record) => Math.max(max, record.answeredAt! - record.sentAt), 0);
    line("cache expiry", expiry);
    line("redis flush", flush);
    line(
      "api kill -9",
      kill,
      ` outage ${restartedAt - killedAt} ms, ${refused.length} requests failed at the network level` +
        ` (slowest ${slowestRefusalMs} ms), first 200 ${restartOkMs} ms after the restart`,
    );

    // After the load: keyed retries of everything that got no 200.
    const keyed = await load.settleKeyed(20_000, 10);
    await stack.runGeneration(world.gameId);
    const ledger = await checkLedger(stack.sql, world.partnerId, load.accepted());
    const keys = await checkKeyedSpins(stack.sql, world.partnerId);
    const outcomes = await checkOutcomes(stack.sql, stack.redis, stack.redisPrefix, world.gameId);
    console.log(
      `KEYED-LOAD totals: ${load.records.length} requests, ${JSON.stringify(load.summary())}; keyed retries ${JSON.stringify(keyed)};` +
        ` replays of answered keys ${replays.filter((replay) => replay === "replayed").length}/${replays.length};` +
        ` ledger ${JSON.stringify({ ...ledger, missing: ledger.missing.length })}; keys ${JSON.stringify(keys)};` +
        ` outcomes ${JSON.stringify({ ...outcomes, sequences: outcomes.sequences.length })}`,
    );

    // Every request got an answer (HTTP, or a failed connection while the API was dead) in time,
    // and no process died of its own.
    expect(hung(load.records)).toEqual([]);
    expect(stack.logLinesWith("uncaught exception")).toEqual([]);
    expect(load.records.filter((record) => record.code === "KS-5001")).toEqual([]);
    // 1 and 2: no fault but a cold process and a cold cache; a large majority is 200 at once
    // (the first 200 is counted from the moment the API listens, or the load resumes).
    for (const phase of [cold, expiry]) expect(phase.firstOkMs).toBeLessThan(RECOVERY_BOUND_MS);
    expect(expiry.answers["200"] ?? 0).toBeGreaterThanOrEqual(0.9 * expiry.requests);
    // 3. The flush emptied the queues: clean failures only, and 200s once the worker rebuilt them.
    expect(flush.answers["503 KS-4203"]).toBeGreaterThan(0);
    expect(uncleanWhileRedisFails(load.answeredBetween(flushedAt, killedAt))).toEqual([]);
    expect(flushOkMs).toBeLessThan(RECOVERY_BOUND_MS);
    // 4. While the API is dead, requests fail fast at the network level; soon after the restart, 200.
    expect(refused.length).toBeGreaterThan(0);
    expect(slowestRefusalMs).toBeLessThan(1_000);
    expect(restartOkMs).toBeLessThan(RECOVERY_BOUND_MS);

    // Every key spun at most once: retries and replays returned the first spin.
    expect(replays).toEqual(Array(answered.length).fill("replayed"));
    expect(keys.spinsWithoutKey).toBe(0);
    expect(keys.spinsOfSeveralKeys).toBe(0);
    expectLedgerIntact(ledger, { unacknowledged: 0 });
    // Outcomes popped by the killed process, or across the flush's rebuild: at most one per client each.
    expectOutcomesIntact(outcomes, { queuedButSpent: CLIENTS, stranded: 2 * CLIENTS });
  });
});
