import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectLedgerIntact, expectOutcomesIntact } from "./harness/expect-intact.js";
import { registerGame, type World, waitForReserve } from "./harness/http.js";
import { checkLedger, checkOutcomes } from "./harness/invariants.js";
import { SpinLoad, uncleanWhileRedisFails } from "./harness/load.js";
import { sleep } from "./harness/processes.js";
import { PrivateRedis } from "./harness/redis-server.js";
import { type Stack, startWorld } from "./harness/stack.js";

let redis: PrivateRedis;
let stack: Stack;
let world: World;

beforeAll(async () => {
  redis = await PrivateRedis.start();
  ({ stack, world } = await startWorld({ stack: { redisUrl: redis.url } }));
});
afterAll(async () => {
  await stack?.close();
  await redis?.stop();
});

describe("Redis lost under spin load (a private redis-server, AOF on)", () => {
  it("fails spins cleanly while it is down, recovers, rebuilds flushed queues from Postgres without reuse", async () => {
    const load = new SpinLoad(stack.api, world, { clients: 6, keyedEvery: 2 }).start();
    await sleep(1_000);

    // 1. kill -9 for 2 s, with a generation job of a new game queued just before.
    const { body: sheets } = await stack.api.call("GET", "/api/partner/v1/par-sheets", { apiKey: world.apiKey });
    const secondGame = await registerGame(stack.api, world.apiKey, sheets.parSheets[0].id);
    const killedAt = Date.now();
    await redis.kill();
    await sleep(2_000);
    await redis.restart();
    const restartedAt = Date.now();
    await load.recovered(restartedAt);
    await waitForReserve(stack.api, secondGame, 4);

    // 2. FLUSHALL: every list, marker, rate-limit bucket and BullMQ key gone at once.
    await sleep(500);
    const flushedAt = Date.now();
    await redis.command(["FLUSHALL"]);
    await load.recovered(flushedAt + 200);
    await sleep(1_000);
    await load.stop();
    const keyed = await load.settleKeyed();
    await stack.runGeneration(world.gameId);

    const outage = load.between(killedAt, restartedAt);
    const afterFlush = load.between(flushedAt, Date.now());
    const ledger = await checkLedger(stack.sql, world.partnerId, load.accepted());
    const outcomes = await checkOutcomes(stack.sql, stack.redis, stack.redisPrefix, world.gameId);
    console.log(
      [
        "FAULT redis-loss: SIGKILL of redis-server for 2 s, restart from AOF; then FLUSHALL, all under 6 spin clients",
        `  answers while down: ${JSON.stringify(load.summary(outage))}`,
        `  answers after FLUSHALL: ${JSON.stringify(load.summary(afterFlush))}`,
        `  game registered just before the kill filled after restart: game ${secondGame}`,
        `  keyed retries after the fault: ${JSON.stringify(keyed)}`,
        `  ledger: ${JSON.stringify(ledger)}`,
        `  outcomes: ${JSON.stringify({ ...outcomes, sequences: outcomes.sequences.length })}`,
      ].join("\n"),
    );

    expect(outage.some((record) => record.status !== 200)).toBe(true);
    expect(uncleanWhileRedisFails(load.records)).toEqual([]);
    expect(afterFlush.some((record) => record.status === 503 && record.code === "KS-4203")).toBe(true);
    expectLedgerIntact(ledger, { unacknowledged: load.unresolved() });
    // A rebuild reads "unused" while spins popped from the old list may still commit: at most one
    // such item per client, and the spin path drops it when popped (the unique key refuses it).
    expectOutcomesIntact(outcomes, { queuedButSpent: 6, stranded: 6 });
  });
});
