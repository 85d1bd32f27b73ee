import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectLedgerIntact, expectOutcomesIntact } from "./harness/expect-intact.js";
import type { World } from "./harness/http.js";
import { checkLedger, checkOutcomes } from "./harness/invariants.js";
import { SpinLoad } from "./harness/load.js";
import { sleep } from "./harness/processes.js";
import { type Stack, startWorld } from "./harness/stack.js";

let stack: Stack;
let world: World;

beforeAll(async () => {
  ({ stack, world } = await startWorld());
});
afterAll(async () => {
  await stack?.close();
});

describe("kill -9 of the API under spin load", () => {
  it("loses no acknowledged spin, serves no outcome twice, keeps every balance exact", async () => {
    const clients = 8;
    const load = new SpinLoad(stack.api, world, { clients, keyedEvery: 2 }).start();
    const kills: { at: number; pid: number | undefined }[] = [];
    for (let round = 0; round < 2; round++) {
      await sleep(1_200);
      kills.push({ at: Date.now(), pid: stack.apiProcess.pid });
      await stack.apiProcess.kill("SIGKILL");
      await sleep(300);
      await stack.startApi(`api-restart-${round + 1}`);
    }
    await sleep(1_000);
    await load.stop();
    const keyed = await load.settleKeyed();

    await stack.runGeneration(world.gameId);

    const ledger = await checkLedger(stack.sql, world.partnerId, load.accepted());
    const outcomes = await checkOutcomes(stack.sql, stack.redis, stack.redisPrefix, world.gameId);
    console.log(
      [
        "FAULT api-crash: SIGKILL of the API process twice under spin load, restarted on the same port",
        `  injected: ${kills.length} kills, ${clients} clients (half with Idempotency-Key), ${load.records.length} requests`,
        `  answers: ${JSON.stringify(load.summary())}`,
        `  keyed requests retried after the fault: ${keyed.retried} (replayed a commit the client never saw: ${keyed.replayed})`,
        `  ledger: ${JSON.stringify(ledger)}`,
        `  outcomes: ${JSON.stringify({ ...outcomes, sequences: outcomes.sequences.length })}`,
      ].join("\n"),
    );

    expect(load.records.filter((record) => record.status === 200).length).toBeGreaterThan(100);
    // Every answer is a 200 or a clean failure: never a 500 KS-5001.
    expect(load.records.filter((record) => record.code === "KS-5001")).toEqual([]);
    // A spin nobody saw succeed can only be one whose answer died with the process, and only
    // for unkeyed requests: keyed ones were retried and replayed.
    expectLedgerIntact(ledger, { unacknowledged: load.unresolved() });
    expect(ledger.unacknowledged).toBeLessThanOrEqual(clients * kills.length);
    // Outcomes neither queued nor spent were popped by a killed process: at most one per
    // request in flight at each kill. They stay unused in their sealed block (never served).
    expectOutcomesIntact(outcomes, { queuedButSpent: 0, stranded: clients * kills.length });
    expect(outcomes.sealedOutcomes).toBe(outcomes.spent + outcomes.queued + outcomes.stranded);
  });
});
