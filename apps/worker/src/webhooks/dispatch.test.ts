import { type Environment, type EventType, newId } from "@outcomes/core";
import {
  createDatabase,
  DISPATCH_BATCH_SIZE,
  dispatchEvents,
  events,
  insertEvent,
  webhookDeliveries,
  webhooks,
} from "@outcomes/db";
import { DELIVERIES_PER_BATCH } from "@outcomes/queue";
import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import { deliveryRow, eventually, startReceiver, startRole } from "@outcomes/testkit/workers";
import { count, eq, inArray, isNull } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { webhooksRole } from "./index.js";
import { reconcileDeliveries } from "./reconcile.js";

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({ WEBHOOK_RETRY_DELAYS_MS: "50,50,50,50" });
});
afterAll(async () => {
  await api?.close();
});

async function webhook(partnerId: string, environment: Environment, types: EventType[], deleted = false) {
  const id = newId("whk");
  await api.database.db.insert(webhooks).values({
    id,
    partnerId,
    environment,
    url: "https://hooks.partner.test/",
    events: types,
    secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
    ...(deleted ? { isActive: false, deletedAt: new Date() } : {}),
  });
  return id;
}

const event = (partnerId: string, environment: Environment, type: EventType) =>
  insertEvent(api.database.db, { partnerId, environment, type, data: { n: 1 } });

async function deliveriesByEvent(eventId: string) {
  return api.database.db
    .select({ webhookId: webhookDeliveries.webhookId, body: webhookDeliveries.body })
    .from(webhookDeliveries)
    .where(eq(webhookDeliveries.eventId, eventId));
}

describe("fan-out", () => {
  it("makes one delivery per active subscribed webhook of the event's partner and environment", async () => {
    const p = (await api.createPartner()).partnerId;
    const q = (await api.createPartner()).partnerId;
    const both = await webhook(p, "sandbox", ["spin.large_win", "block.low_reserve"]);
    const reports = await webhook(p, "sandbox", ["settlement.report_ready"]);
    await webhook(p, "sandbox", ["spin.large_win"], true);
    const production = await webhook(p, "production", ["spin.large_win"]);
    await webhook(q, "sandbox", ["spin.large_win"]);

    const win = await event(p, "sandbox", "spin.large_win");
    const low = await event(p, "sandbox", "block.low_reserve");
    const live = await event(p, "production", "spin.large_win");
    const report = await event(p, "sandbox", "settlement.report_ready");
    const unheard = await event(q, "sandbox", "api_key.expiring");

    while ((await dispatchEvents(api.database.db, DISPATCH_BATCH_SIZE, DELIVERIES_PER_BATCH)).events > 0);

    expect((await deliveriesByEvent(win.id)).map((row) => row.webhookId)).toEqual([both]);
    expect((await deliveriesByEvent(low.id)).map((row) => row.webhookId)).toEqual([both]);
    expect((await deliveriesByEvent(live.id)).map((row) => row.webhookId)).toEqual([production]);
    expect((await deliveriesByEvent(report.id)).map((row) => row.webhookId)).toEqual([reports]);
    expect(await deliveriesByEvent(unheard.id)).toEqual([]);
    // The body is the event exactly, in the documented key order.
    const [winDelivery] = await deliveriesByEvent(win.id);
    expect(winDelivery!.body).toBe(JSON.stringify(win));
    const [open] = await api.database.db.select({ value: count() }).from(events).where(isNull(events.dispatchedAt));
    expect(open!.value).toBe(0);
  });

  it("never makes a delivery twice, with dispatchers racing or a re-run", async () => {
    const { partnerId } = await api.createPartner();
    const hooks = [
      await webhook(partnerId, "sandbox", ["block.low_reserve"]),
      await webhook(partnerId, "sandbox", ["block.low_reserve"]),
    ];
    const written = [];
    for (let i = 0; i < 300; i++) written.push(await event(partnerId, "sandbox", "block.low_reserve"));

    const clients = Array.from({ length: 4 }, () => createDatabase(api.database.url, { max: 2 }));
    try {
      const drain = async (client: (typeof clients)[number]) => {
        let total = 0;
        for (
          let batch = await dispatchEvents(client.db, 50, DELIVERIES_PER_BATCH);
          batch.events > 0;
          batch = await dispatchEvents(client.db, 50, DELIVERIES_PER_BATCH)
        ) {
          total += batch.events;
        }
        return total;
      };
      const handled = await Promise.all(clients.map(drain));
      expect(handled.reduce((sum, n) => sum + n, 0)).toBe(300);
    } finally {
      await Promise.all(clients.map((client) => client.close()));
    }
    const ofPartner = await api.database.db
      .select({ webhookId: webhookDeliveries.webhookId, eventId: webhookDeliveries.eventId })
      .from(webhookDeliveries)
      .innerJoin(webhooks, eq(webhooks.id, webhookDeliveries.webhookId))
      .where(eq(webhooks.partnerId, partnerId));
    expect(ofPartner).toHaveLength(600);
    expect(new Set(ofPartner.map((row) => `${row.webhookId}/${row.eventId}`)).size).toBe(600);
    expect(new Set(ofPartner.map((row) => row.webhookId))).toEqual(new Set(hooks));

    // A re-run over the same events (as after a crash) inserts nothing new.
    await api.database.db.update(events).set({ dispatchedAt: null }).where(eq(events.partnerId, partnerId));
    let again = 0;
    for (
      let batch = await dispatchEvents(api.database.db, DISPATCH_BATCH_SIZE, DELIVERIES_PER_BATCH);
      batch.events > 0;
      batch = await dispatchEvents(api.database.db, DISPATCH_BATCH_SIZE, DELIVERIES_PER_BATCH)
    ) {
      again += batch.deliveryIds.length;
    }
    expect(again).toBe(0);
  });
});

describe("reconciler", () => {
  it("queues again an open delivery whose job was lost, and the worker delivers it", async () => {
    // The fan-out tests above left open deliveries that were never queued: close them, they are not this test's.
    await api.database.db
      .update(webhookDeliveries)
      .set({ status: "failed", completedAt: new Date() })
      .where(inArray(webhookDeliveries.status, ["pending", "retrying"]));
    const target = await startReceiver();
    const { partnerId } = await api.createPartner();
    const webhookId = newId("whk");
    await api.database.db.insert(webhooks).values({
      id: webhookId,
      partnerId,
      environment: "sandbox",
      url: target.url,
      events: ["spin.large_win"],
      secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
    });
    const lost = await event(partnerId, "sandbox", "spin.large_win");
    await api.database.db.update(events).set({ dispatchedAt: new Date() }).where(eq(events.id, lost.id));
    // Fan-out committed, then the process died before queueing the job.
    const deliveryId = newId("dlv");
    await api.database.db.insert(webhookDeliveries).values({
      id: deliveryId,
      webhookId,
      eventId: lost.id,
      eventCreatedAt: new Date(lost.createdAt),
      eventType: lost.type,
      body: JSON.stringify(lost),
      nextAttemptAt: new Date(Date.now() - 60_000),
    });

    // Two reconcilers at once: the advisory lock lets one of them work.
    const requeued = await Promise.all([
      reconcileDeliveries(api.database.db, api.deps.producers, { graceMs: 1000 }),
      reconcileDeliveries(api.database.db, api.deps.producers, { graceMs: 1000 }),
    ]);
    expect(requeued.sort()).toEqual([0, 1]);
    expect(await api.deps.producers.queues.webhooks.getJobState(deliveryId)).toBe("waiting");

    const worker = await startRole(api, webhooksRole({ pollIntervalMs: 100 }));
    try {
      await eventually(async () => (await deliveryRow(api, deliveryId))?.status === "succeeded");
      expect(target.requests.map((request) => request.headers["x-service-delivery-id"])).toEqual([deliveryId]);
      // Queued and finished: nothing more to reconcile.
      expect(await reconcileDeliveries(api.database.db, api.deps.producers, { graceMs: 0 })).toBe(0);
    } finally {
      await worker.close();
      await target.close();
    }
  });
});
