import type { ChildProcess } from "node:child_process";
import { once } from "node:events";
import { setTimeout as sleep } from "node:timers/promises";
import { replayFailedDeliveries, webhookRecoveries } from "@outcomes/db";
import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import { redeliveryTally, seedFailedDeliveries, webhookWithDeliveries } from "@outcomes/testkit/deliveries";
import {
  eventually,
  registerWebhook,
  startReceiver,
  startRole,
  startWebhooksCrashWorker,
} from "@outcomes/testkit/workers";
import { eq } from "drizzle-orm";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { webhooksRole } from "./index.js";
import { reconcileRecoveries } from "./reconcile.js";

/**
 * Recover's worker side (CONTRACT §11): the `webhook.recover` job makes each counted delivery once
 * when its worker is killed mid-way, when two copies of it run at once, beside an operator's replay,
 * and stops when the webhook is deleted. The `webhooks` queue is paused after the first test:
 * deliveries are written and queued, not sent, so the recoveries are not paced by it.
 */
const CHUNK = 1000;
const UNPACED = { recoveryChunkSize: CHUNK, recoveryQueueAhead: Number.MAX_SAFE_INTEGER };
const HOUR_MS = 3600_000;

let api: TestApi;
let child: ChildProcess | undefined;
const roles: Array<Awaited<ReturnType<typeof startRole>>> = [];
beforeAll(async () => {
  api = await startTestApi();
});
afterEach(async () => {
  child?.kill("SIGKILL");
  child = undefined;
  await Promise.all(roles.splice(0).map((role) => role.close()));
});
afterAll(async () => {
  await api?.close();
});

const recoveryQueue = () => api.deps.producers.queues["webhook-recovery"];

/** A webhook with `count` failed deliveries, made in the last two hours. */
async function backlog(count: number) {
  const target = await registerWebhook(api, "https://hooks.partner.test/", ["block.low_reserve"]);
  await seedFailedDeliveries(api, { ...target, count });
  return target;
}

async function recover(target: { apiKey: string; webhookId: string }) {
  const response = await api.request(`/api/partner/v1/webhooks/${target.webhookId}/recover`, {
    method: "POST",
    apiKey: target.apiKey,
    json: { since: new Date(Date.now() - 3 * HOUR_MS).toISOString() },
  });
  if (response.status !== 202) throw new Error(`recover answered ${response.status}`);
  return response.body.recovered as number;
}

async function recoveriesOf(webhookId: string) {
  return api.database.db.select().from(webhookRecoveries).where(eq(webhookRecoveries.webhookId, webhookId));
}

async function onlyRecovery(webhookId: string) {
  const [recovery, ...more] = await recoveriesOf(webhookId);
  expect(more).toEqual([]);
  return recovery!;
}

/** The webhook's only recovery is done, and it made each of its `count` deliveries exactly once. */
async function expectDoneEachOnce(webhookId: string, count: number) {
  expect(await onlyRecovery(webhookId)).toMatchObject({ status: "done", redelivered: count });
  expect(await redeliveryTally(api, webhookId)).toMatchObject({ copies: count, missing: 0, twice: 0, wrong: 0 });
}

describe("webhook.recover job", () => {
  it("is made only as fast as deliveries are sent, and each is sent once", async () => {
    const receiver = await startReceiver();
    try {
      const target = await registerWebhook(api, receiver.url, ["block.low_reserve"]);
      await seedFailedDeliveries(api, { ...target, count: 6000 });
      const deliver = api.deps.producers.queues.webhooks;
      await deliver.pause();
      // A short stalled check: BullMQ's is one slot per queue, held for the interval of the worker that
      // checked last, and the crash test below needs a take-over soon after this role is gone.
      const paced = { recoveryChunkSize: 500, recoveryQueueAhead: 1000, stalledIntervalMs: 500 };
      roles.push(await startRole(api, webhooksRole(paced)));
      expect(await recover(target)).toBe(6000);

      // Nothing is sent while the queue is paused: the recovery stops once 1,000 wait.
      await eventually(async () => (await onlyRecovery(target.webhookId)).redelivered >= 1000, 20_000);
      await sleep(1500);
      const held = await onlyRecovery(target.webhookId);
      expect(held.status).toBe("running");
      // At most two chunks past the bound: one being queued while the next was written.
      expect(held.redelivered).toBeLessThanOrEqual(2000);
      expect(await deliver.getWaitingCount()).toBe(held.redelivered);

      await deliver.resume();
      await eventually(async () => (await onlyRecovery(target.webhookId)).status === "done", 60_000);
      await eventually(() => receiver.requests.length >= 6000, 60_000);
      const ids = new Set(receiver.requests.map((request) => String(request.headers["x-service-delivery-id"])));
      expect([receiver.requests.length, ids.size]).toEqual([6000, 6000]);
      expect(await redeliveryTally(api, target.webhookId)).toMatchObject({ copies: 6000, missing: 0, twice: 0 });
    } finally {
      await api.deps.producers.queues.webhooks.pause();
      await receiver.close();
    }
  }, 90_000);

  it("resumes where a killed worker stopped: each failed delivery once", async () => {
    const target = await backlog(20_000);
    child = await startWebhooksCrashWorker(api, { WEBHOOKS_ROLE_OPTIONS: JSON.stringify(UNPACED) });
    expect(await recover(target)).toBe(20_000);

    const midway = await eventually(async () => {
      const recovery = await onlyRecovery(target.webhookId);
      return recovery.redelivered >= CHUNK && recovery;
    }, 20_000);
    child.kill("SIGKILL");
    await once(child, "exit");
    // Killed mid-way, not after the end: otherwise this test would prove nothing.
    const atKill = await onlyRecovery(target.webhookId);
    expect(atKill.status).toBe("running");
    expect(atKill.redelivered).toBeGreaterThanOrEqual(midway.redelivered);
    expect(atKill.redelivered).toBeLessThan(20_000);

    // The job's lock lapses (1 s in the child) and another worker takes it over from the cursor.
    roles.push(await startRole(api, webhooksRole({ ...UNPACED, lockDurationMs: 1000, stalledIntervalMs: 500 })));
    const job = (await recoveryQueue().getJob(atKill.id))!;
    await eventually(async () => (await job.getState()) === "completed", 60_000, 50);
    const done = await onlyRecovery(target.webhookId);
    expect(done).toMatchObject({ status: "done", counted: 20_000, redelivered: 20_000 });
    const finished = (await recoveryQueue().getJob(atKill.id))!;
    // The survivor made only what the killed worker had not committed.
    expect(finished.returnvalue).toEqual({
      status: "done",
      redelivered: 20_000,
      counted: 20_000,
      made: 20_000 - atKill.redelivered,
    });
    expect(await redeliveryTally(api, target.webhookId)).toMatchObject({
      originals: 20_000,
      copies: 20_000,
      missing: 0,
      twice: 0,
      wrong: 0,
    });
  }, 90_000);

  it("makes each delivery once when two copies of the job run at once", async () => {
    const target = await backlog(20_000);
    const options = { ...UNPACED, recoveryConcurrency: 1 };
    roles.push(await startRole(api, webhooksRole(options)), await startRole(api, webhooksRole(options)));
    expect(await recover(target)).toBe(20_000);
    const { id } = await onlyRecovery(target.webhookId);
    // A second job for the same recovery, as a reconciler that thought the first lost would queue.
    await api.deps.producers.add("webhook.recover", { recoveryId: id }, { jobId: `${id}-again` });

    const jobs = [(await recoveryQueue().getJob(id))!, (await recoveryQueue().getJob(`${id}-again`))!];
    await eventually(
      async () => {
        const states = await Promise.all(jobs.map((job) => job.getState()));
        return states.every((state) => state === "completed");
      },
      60_000,
      50,
    );
    const made = await Promise.all(
      jobs.map(async (job) => ((await recoveryQueue().getJob(job.id!))!.returnvalue as { made: number }).made),
    );
    // Both ran chunks, taking turns on the recovery's row: between them every delivery once.
    expect(made.every((count) => count > 0)).toBe(true);
    expect(made[0]! + made[1]!).toBe(20_000);
    await expectDoneEachOnce(target.webhookId, 20_000);
  }, 90_000);

  it("is handed back after one chunk when its worker shuts down, and another worker finishes it", async () => {
    const target = await backlog(20_000);
    const first = await startRole(api, webhooksRole(UNPACED));
    expect(await recover(target)).toBe(20_000);
    const { id } = await eventually(
      async () => {
        const recovery = await onlyRecovery(target.webhookId);
        return recovery.redelivered > 0 && recovery;
      },
      20_000,
      10,
    );

    const closing = performance.now();
    await first.close();
    const closeMs = performance.now() - closing;
    const handedBack = await onlyRecovery(target.webhookId);
    expect(handedBack.status).toBe("running");
    expect(handedBack.redelivered).toBeLessThan(20_000);
    // Waiting again with no attempt spent, not failed and not left active until its lock lapses.
    const job = (await recoveryQueue().getJob(id))!;
    expect(await job.getState()).toBe("waiting");
    expect(job.attemptsMade).toBe(0);
    // One chunk, not the rest of the recovery.
    expect(closeMs).toBeLessThan(3000);

    roles.push(await startRole(api, webhooksRole(UNPACED)));
    await eventually(async () => (await job.getState()) === "completed", 60_000, 50);
    await expectDoneEachOnce(target.webhookId, 20_000);
  }, 90_000);

  it("stops when the webhook is deleted, and the delete does not wait for the recovery", async () => {
    const target = await backlog(20_000);
    roles.push(await startRole(api, webhooksRole(UNPACED)));
    expect(await recover(target)).toBe(20_000);
    await eventually(async () => (await onlyRecovery(target.webhookId)).redelivered > 0, 20_000, 10);

    const started = performance.now();
    const deleted = await api.request(`/api/partner/v1/webhooks/${target.webhookId}`, {
      method: "DELETE",
      apiKey: target.apiKey,
    });
    const deleteMs = performance.now() - started;
    expect(deleted.status).toBe(200);
    // At most one chunk's transaction (the API's lock_timeout is 5 s).
    expect(deleteMs).toBeLessThan(2000);

    const cancelled = await eventually(async () => {
      const recovery = await onlyRecovery(target.webhookId);
      return recovery.status !== "running" && recovery;
    }, 20_000);
    expect(cancelled.status).toBe("cancelled");
    expect(cancelled.redelivered).toBeLessThan(20_000);
    // What it made before the delete was closed by it: nothing is left to send to a deleted webhook.
    expect(await redeliveryTally(api, target.webhookId)).toMatchObject({
      copies: cancelled.redelivered,
      twice: 0,
      open: 0,
    });
  }, 60_000);

  it("is queued again by the reconciler when its job is lost", async () => {
    const target = await backlog(3000);
    expect(await recover(target)).toBe(3000);
    const { id } = await onlyRecovery(target.webhookId);
    // Redis lost the job (or the API's enqueue failed after its commit): Postgres still says running.
    await recoveryQueue().remove(id);
    expect(await recoveryQueue().getJobState(id)).toBe("unknown");

    const options = { graceMs: 0 };
    expect(await reconcileRecoveries(api.database.db, api.deps.producers, options)).toBe(1);
    expect(await recoveryQueue().getJobState(id)).toBe("waiting");
    // Queued once: a second pass finds its job.
    expect(await reconcileRecoveries(api.database.db, api.deps.producers, options)).toBe(0);

    roles.push(await startRole(api, webhooksRole(UNPACED)));
    await eventually(async () => (await onlyRecovery(target.webhookId)).status === "done", 20_000);
    expect(await redeliveryTally(api, target.webhookId)).toMatchObject({ copies: 3000, missing: 0, twice: 0 });
    // Done: nothing for the reconciler any more.
    expect(await reconcileRecoveries(api.database.db, api.deps.producers, options)).toBe(0);
  });

  it("makes each delivery once under concurrent recovers and operator replays", async () => {
    const world = await webhookWithDeliveries(api, Array(40).fill("failed"));
    roles.push(await startRole(api, webhooksRole(UNPACED)));
    const since = new Date(Date.now() - HOUR_MS).toISOString();
    // 24 partner calls on a 10-connection pool, and 3 operator bulk replays beside them and their jobs.
    const [recovered] = await Promise.all([
      Promise.all(
        Array.from({ length: 24 }, () =>
          api.request(`/api/partner/v1/webhooks/${world.webhookId}/recover`, {
            method: "POST",
            apiKey: world.apiKey,
            json: { since },
          }),
        ),
      ),
      Promise.all(
        Array.from({ length: 3 }, () => replayFailedDeliveries(api.database.db, { webhookId: world.webhookId })),
      ),
    ]);
    expect(recovered.every((response) => response.status === 202)).toBe(true);
    await eventually(async () => (await recoveriesOf(world.webhookId)).every((row) => row.status === "done"), 20_000);
    expect(await redeliveryTally(api, world.webhookId)).toMatchObject({
      originals: 40,
      copies: 40,
      missing: 0,
      twice: 0,
      wrong: 0,
    });
  });
});
