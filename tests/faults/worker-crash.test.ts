import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expiringKeyWatched, registerGame, type World, waitForReserve } from "./harness/http.js";
import { checkOutcomes, contiguous } from "./harness/invariants.js";
import { holdTableLock, waitForLockWaiter } from "./harness/locks.js";
import { eventually, type ServiceProcess, sleep } from "./harness/processes.js";
import { Receiver } from "./harness/receiver.js";
import { type Stack, startWorld } from "./harness/stack.js";

let stack: Stack;
let world: World;
let receiver: Receiver;
let defaultBlocks: ServiceProcess;
const today = new Date().toISOString().slice(0, 10);

beforeAll(async () => {
  // The first request to the receiver never gets an answer: its worker is killed while waiting.
  receiver = await Receiver.start((index) => (index === 0 ? "hang" : 204));
  ({ stack, world, worker: defaultBlocks } = await startWorld());
});
afterAll(async () => {
  await stack?.close();
  await receiver?.close();
});

async function waitForJob(queueName: string, jobId: string, timeoutMs = 20_000): Promise<void> {
  const queue = stack.queue(queueName);
  try {
    await eventually(
      async () => (await queue.getJobState(jobId)) === "completed",
      timeoutMs,
      `${queueName} job ${jobId}`,
    );
  } finally {
    await queue.close();
  }
}

describe("a worker killed with SIGKILL mid-job: another worker process takes the job over", () => {
  it("block generation: no duplicate or missing block sequence, every outcome queued once", async () => {
    // Generation runs at ~1M outcomes/s, a whole 4 × 20,000 fill in under 0.1 s: blocks of 50,000
    // (~50 ms each) and a 2 ms poll catch the first sealed block before the rest.
    const big = { BLOCK_SIZE: "50000" };
    const first = await stack.startWorker("blocks-a", ["blocks"], big);
    const { body: sheets } = await stack.api.call("GET", "/api/partner/v1/par-sheets", { apiKey: world.apiKey });
    await defaultBlocks.kill(); // the job must go to the worker about to be killed
    const gameId = await registerGame(stack.api, world.apiKey, sheets.parSheets[0].id);
    for (const deadline = Date.now() + 20_000; ; await sleep(2)) {
      const [row] = await stack.sql<{ n: number }[]>`select count(*)::int as n from blocks where game_id = ${gameId}`;
      if ((row?.n ?? 0) >= 1) break;
      if (Date.now() > deadline) throw new Error("Timed out waiting for the first sealed block");
    }
    const lock = await holdTableLock(stack.sql, "blocks", "exclusive");
    const [sealed] = await stack.sql<{ n: number }[]>`select count(*)::int as n from blocks where game_id = ${gameId}`;
    await first.kill("SIGKILL");
    await stack.startWorker("blocks-b", ["blocks"], big);
    await sleep(500);
    await lock.release();
    await waitForReserve(stack.api, gameId, 4);
    await sleep(300);
    const outcomes = await checkOutcomes(stack.sql, stack.redis, stack.redisPrefix, gameId);
    console.log(
      [
        "FAULT worker-crash/blocks: SIGKILL of the blocks worker mid-generation (BLOCK_SIZE 50000, target 4)",
        `  injected: killed after ${sealed?.n} sealed block(s), the next seal held on a table lock; a second worker started`,
        `  checked: ${JSON.stringify(outcomes)}`,
      ].join("\n"),
    );
    expect(sealed?.n).toBeLessThan(4);
    expect(outcomes.sequences).toEqual([1, 2, 3, 4]);
    expect(contiguous(outcomes.sequences)).toBe(true);
    expect(outcomes.loadedThrough).toBe(4);
    expect(outcomes.queued).toBe(4 * 50_000);
    expect(outcomes.duplicateQueued).toBe(0);
    expect(outcomes.stranded).toBe(0);
  });

  it("key-expiry sweep and webhook delivery: one notice, delivered at least once under one delivery id", async () => {
    const expiring = await expiringKeyWatched(stack.api, world, receiver.url);
    const slowHooks = { WEBHOOK_TIMEOUT_MS: "20000" };

    const sweeper = await stack.startWorker("key-expiry-a", ["key-expiry"]);
    const lock = await holdTableLock(stack.sql, "api_key_expiry_notices", "access exclusive");
    await stack.api.expect(202, "POST", "/api/admin/v1/jobs/key-expiry/run", { admin: true });
    await waitForLockWaiter(stack.sql, "api_key_expiry_notices");
    await sweeper.kill("SIGKILL");
    await lock.release();

    const deliverer = await stack.startWorker("hooks-b", ["key-expiry", "webhooks"], slowHooks);
    await eventually(() => receiver.received.length >= 1, 20_000, "the first delivery attempt");
    await deliverer.kill("SIGKILL");
    await stack.startWorker("hooks-c", ["key-expiry", "webhooks"], slowHooks);
    await eventually(() => receiver.received.length >= 2, 20_000, "the delivery retried by another worker");

    const again = await stack.api.expect(202, "POST", "/api/admin/v1/jobs/key-expiry/run", { admin: true });
    await waitForJob("key-expiry", again.jobId);
    const events = await stack.sql<{ id: string }[]>`
      select id from events where type = 'api_key.expiring' and payload->'data'->>'apiKeyId' = ${expiring.id}`;
    const [delivery] = await stack.sql<{ status: string; attempts: number }[]>`
      select status, attempts from webhook_deliveries where id = ${receiver.received[0]!.deliveryId}`;
    const seen = receiver.received.map((r) => ({ deliveryId: r.deliveryId, attempt: r.attempt, event: r.body?.id }));
    console.log(
      [
        "FAULT worker-crash/key-expiry+webhooks: SIGKILL mid-sweep (held on a table lock), then SIGKILL mid-delivery (receiver never answered)",
        `  checked: api_key.expiring events for the key: ${events.length}; receiver saw ${JSON.stringify(seen)}; delivery row ${JSON.stringify(delivery)}`,
      ].join("\n"),
    );
    expect(events).toHaveLength(1);
    expect(new Set(seen.map((r) => r.deliveryId)).size).toBe(1);
    expect(new Set(seen.map((r) => r.event))).toEqual(new Set([events[0]!.id]));
    expect(seen.map((r) => r.attempt)).toEqual([1, 2]);
    expect(delivery).toEqual({ status: "succeeded", attempts: 2 });
  });

  it("settlement run: one report per partner and day, one report_ready event", async () => {
    for (let n = 0; n < 20; n++) {
      await stack.api.expect(200, "POST", "/api/partner/v1/spins", {
        apiKey: world.apiKey,
        json: { gameId: world.gameId, playerId: `settle-${n % 4}`, wagerUsd: 1.5 },
      });
    }
    const first = await stack.startWorker("settlements-a", ["settlements"]);
    const lock = await holdTableLock(stack.sql, "settlement_reports", "access exclusive");
    const run = await stack.api.expect(202, "POST", "/api/admin/v1/jobs/settlements/run", {
      admin: true,
      json: { reportDate: today },
    });
    await waitForLockWaiter(stack.sql, "settlement_reports");
    await first.kill("SIGKILL");
    await stack.startWorker("settlements-b", ["settlements"]);
    await lock.release();
    await waitForJob("settlements", run.jobId);
    const again = await stack.api.expect(202, "POST", "/api/admin/v1/jobs/settlements/run", {
      admin: true,
      json: { reportDate: today },
    });
    await waitForJob("settlements", again.jobId);

    const report = await stack.api.expect(200, "GET", `/api/partner/v1/settlements/${today}`, { apiKey: world.apiKey });
    const [rows] = await stack.sql<{ n: number }[]>`
      select count(*)::int as n from settlement_reports where partner_id = ${world.partnerId}`;
    const events = await stack.sql`
      select id from events where type = 'settlement.report_ready' and partner_id = ${world.partnerId}
        and payload->'data'->>'reportDate' = ${today}`;
    console.log(
      [
        "FAULT worker-crash/settlements: SIGKILL of the settlements worker mid-run (held on a table lock), a second worker, then the run repeated",
        `  checked: reports ${rows?.n}, report_ready events ${events.length}, report ${JSON.stringify({ totalSpins: report.totalSpins, totalWageredUsd: report.totalWageredUsd })}`,
      ].join("\n"),
    );
    expect(rows?.n).toBe(1);
    expect(events).toHaveLength(1);
    expect(report).toMatchObject({ reportDate: today, totalSpins: 20, totalWageredUsd: 30 });
  });
});
