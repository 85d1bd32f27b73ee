import { dispatchEvents, insertEvents, webhookDeliveries } from "@outcomes/db";
import { DELIVERIES_PER_BATCH, enqueueDeliveryBatches } from "@outcomes/queue";
import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import { deliveryRow, emitEvent, eventually, receiverSet, registerWebhook, startRole } from "@outcomes/testkit/workers";
import { eq, inArray } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { webhooksRole } from "./index.js";
import { reconcileDeliveries } from "./reconcile.js";

let api: TestApi;
const receivers = receiverSet();

beforeAll(async () => {
  // A send answered late on a loaded machine must not turn into a retry: "each delivery once" counts attempts.
  api = await startTestApi({ WEBHOOK_RETRY_DELAYS_MS: "300,300,300,300", WEBHOOK_TIMEOUT_MS: "30000" });
});
afterAll(async () => {
  await receivers.closeAll();
  await api?.close();
});

const receiver = receivers.start;

/** `count` outbox events of a partner in one statement, as a burst of spins would leave them. */
async function burst(partnerId: string, count: number) {
  await insertEvents(
    api.database.db,
    Array.from({ length: count }, (_, i) => ({
      partnerId,
      environment: "sandbox" as const,
      type: "spin.large_win" as const,
      data: { spinId: `spn_burst_${i}`, payoutUsd: 1500 },
    })),
  );
}

const deliveriesOfWebhook = (webhookId: string) =>
  api.database.db
    .select({ id: webhookDeliveries.id, batchId: webhookDeliveries.batchId, attempts: webhookDeliveries.attempts })
    .from(webhookDeliveries)
    .where(eq(webhookDeliveries.webhookId, webhookId));

describe("first attempts in batches", () => {
  it("sends a burst in batch jobs, each delivery once, with two workers taking them", async () => {
    const target = await receiver();
    const hook = await registerWebhook(api, target.url);
    const workers = await Promise.all([1, 2].map(() => startRole(api, webhooksRole({ pollIntervalMs: 50 }))));
    try {
      await burst(hook.partnerId, 450);
      await eventually(() => target.requests.length >= 450, 20_000);
      // A late duplicate would arrive after the last first attempt: give it time to.
      await new Promise((resolve) => setTimeout(resolve, 500));
    } finally {
      await Promise.all(workers.map((worker) => worker.close()));
    }
    const ids = target.requests.map((request) => String(request.headers["x-service-delivery-id"]));
    expect(ids).toHaveLength(450);
    expect(new Set(ids).size).toBe(450);
    expect(target.requests.every((request) => request.headers["x-service-attempt"] === "1")).toBe(true);

    const rows = await deliveriesOfWebhook(hook.webhookId);
    expect(rows).toHaveLength(450);
    expect(rows.every((row) => row.batchId !== null && row.attempts === 1)).toBe(true);
    const perBatch = new Map<string, number>();
    for (const row of rows) perBatch.set(row.batchId!, (perBatch.get(row.batchId!) ?? 0) + 1);
    expect(Math.max(...perBatch.values())).toBeLessThanOrEqual(DELIVERIES_PER_BATCH);
    // Dispatch takes 200 events at a time: at least 3 batches of at most 100, far fewer jobs than deliveries.
    expect(perBatch.size).toBeGreaterThanOrEqual(5);
    expect(perBatch.size).toBeLessThan(20);
    const batches = api.deps.producers.queues["webhook-batches"];
    const states = await Promise.all([...perBatch.keys()].map((id) => batches.getJobState(id)));
    expect(states.every((state) => state === "completed")).toBe(true);
    // No delivery needed a job of its own.
    const own = await Promise.all(ids.slice(0, 50).map((id) => api.deps.producers.queues.webhooks.getJobState(id)));
    expect(own.every((state) => state === "unknown")).toBe(true);
  });

  it("hands a failed first attempt to a job of its own, which retries it on the schedule", async () => {
    const failedAt = new Map<string, number>();
    const target = await receiver((request) => {
      const id = String(request.headers["x-service-delivery-id"]);
      if (failedAt.has(id)) return 200;
      failedAt.set(id, request.at);
      return 503;
    });
    const hook = await registerWebhook(api, target.url);
    const worker = await startRole(api, webhooksRole({ pollIntervalMs: 50 }));
    try {
      const events = await Promise.all([1, 2, 3].map(() => emitEvent(api, hook.partnerId)));
      await eventually(() => target.requests.length === 6, 10_000);
      const rows = await deliveriesOfWebhook(hook.webhookId);
      for (const row of rows) {
        await eventually(async () => (await deliveryRow(api, row.id))?.status === "succeeded");
        expect(await deliveryRow(api, row.id)).toMatchObject({ status: "succeeded", attempts: 2 });
        await eventually(async () => (await api.deps.producers.queues.webhooks.getJobState(row.id)) === "completed");
      }
      expect(rows).toHaveLength(events.length);
      for (const [id, first] of failedAt) {
        const second = target.requests.find(
          (request) => request.headers["x-service-attempt"] === "2" && request.headers["x-service-delivery-id"] === id,
        );
        expect(second).toBeDefined();
        expect(second!.at - first).toBeGreaterThanOrEqual(290);
      }
    } finally {
      await worker.close();
    }
  });

  it("reconciler: leaves the deliveries of a batch job still queued, and queues a lost batch again", async () => {
    const target = await receiver();
    const hook = await registerWebhook(api, target.url);
    await burst(hook.partnerId, 3);
    // Fan-out committed and queued its batch; no worker runs yet (a backlog).
    const made = await dispatchEvents(api.database.db, 200, DELIVERIES_PER_BATCH);
    const ours = made.batches.filter((batch) => batch.deliveryIds.length === 3);
    expect(ours).toHaveLength(1);
    const batch = ours[0]!;
    await enqueueDeliveryBatches(api.deps.producers, [batch]);
    const [inFlight, ...unsent] = batch.deliveryIds;
    await api.database.db
      .update(webhookDeliveries)
      .set({ nextAttemptAt: new Date(Date.now() - 60_000) })
      .where(inArray(webhookDeliveries.id, batch.deliveryIds));
    // One of them as a send of the batch in flight leaves it: its first attempt counted, no answer yet.
    await api.database.db.update(webhookDeliveries).set({ attempts: 1 }).where(eq(webhookDeliveries.id, inFlight!));

    expect(await reconcileDeliveries(api.database.db, api.deps.producers, { graceMs: 1000 })).toBe(0);
    expect(await api.deps.producers.queues.webhooks.getJobState(inFlight!)).toBe("unknown");

    // Redis lost the batch job: the deliveries without an attempt get their batch again, the other a job of its own.
    const batches = api.deps.producers.queues["webhook-batches"];
    await batches.remove(batch.batchId);
    expect(await reconcileDeliveries(api.database.db, api.deps.producers, { graceMs: 1000 })).toBe(3);
    expect(await batches.getJobState(batch.batchId)).toBe("waiting");
    expect((await batches.getJob(batch.batchId))?.data).toEqual({ deliveryIds: unsent });
    expect(await api.deps.producers.queues.webhooks.getJobState(inFlight!)).toBe("waiting");
    const worker = await startRole(api, webhooksRole({ pollIntervalMs: 50 }));
    try {
      await eventually(() => target.requests.length === 3, 10_000);
      await new Promise((resolve) => setTimeout(resolve, 300));
    } finally {
      await worker.close();
    }
    const sent = target.requests.map((request) => [
      String(request.headers["x-service-delivery-id"]),
      request.headers["x-service-attempt"],
    ]);
    expect(sent.sort()).toEqual([[inFlight, "2"], ...unsent.map((id) => [id, "1"])].sort() as Array<[string, string]>);
  });

  it("hands a failed first attempt over even when a finished job of its id is kept", async () => {
    const target = await receiver((_request, index) => (index === 0 ? 503 : 200));
    const hook = await registerWebhook(api, target.url);
    await burst(hook.partnerId, 1);
    const made = await dispatchEvents(api.database.db, 200, DELIVERIES_PER_BATCH);
    const batch = made.batches.find((each) => each.deliveryIds.length === 1)!;
    const [deliveryId] = batch.deliveryIds;
    // A job of its own that found nothing to send finished and is kept (BullMQ keeps finished jobs).
    const own = api.deps.producers.queues.webhooks;
    const setStatus = (status: "pending" | "succeeded") =>
      api.database.db.update(webhookDeliveries).set({ status }).where(eq(webhookDeliveries.id, deliveryId!));
    await setStatus("succeeded");
    await own.add("webhook.deliver", { deliveryId: deliveryId! }, { jobId: deliveryId });
    const worker = await startRole(api, webhooksRole({ pollIntervalMs: 50 }));
    try {
      await eventually(async () => (await own.getJobState(deliveryId!)) === "completed");
      await setStatus("pending");
      // The batch's first attempt fails (503): its retry must run, not be ignored beside the finished job.
      await enqueueDeliveryBatches(api.deps.producers, [batch]);
      await eventually(async () => (await deliveryRow(api, deliveryId!))?.status === "succeeded", 10_000);
    } finally {
      await worker.close();
    }
    expect(target.requests.map((request) => request.headers["x-service-attempt"])).toEqual(["1", "2"]);
  });
});
