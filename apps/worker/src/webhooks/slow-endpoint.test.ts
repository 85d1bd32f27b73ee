import { insertEvents, webhookDeliveries } from "@outcomes/db";
import { notifyEvents } from "@outcomes/queue";
import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import { emitEvent, eventually, receiverSet, registerWebhook, startRole } from "@outcomes/testkit/workers";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { webhooksRole } from "./index.js";

const TIMEOUT_MS = 1500;
const SLOW = { slowSendMs: 500, slowEndpointInFlight: 4 };
let api: TestApi;
let workers: Array<Awaited<ReturnType<typeof startRole>>>;
const receivers = receiverSet();

beforeAll(async () => {
  api = await startTestApi({
    WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
    WEBHOOK_RETRY_DELAYS_MS: "60000,60000,60000,60000",
  });
  // Two worker processes' worth of the role, each with 24 sends at once: a hanging endpoint with a
  // backlog would take all of them for its timeouts, were it not capped.
  const role = () => webhooksRole({ pollIntervalMs: 50, concurrency: 24, ...SLOW });
  workers = [await startRole(api, role()), await startRole(api, role())];
});
afterAll(async () => {
  await Promise.all(workers.map((worker) => worker.close()));
  await receivers.closeAll();
  await api?.close();
});

const receiver = receivers.start;

describe("a slow endpoint beside others (CONTRACT §18: one slow endpoint never delays another's deliveries)", () => {
  it("caps a hanging endpoint's sends per process; the same partner's other webhook and another partner's keep their latency", async () => {
    const hanging = await receiver(() => "hang");
    const samePartner = await receiver();
    const otherPartner = await receiver();
    const { partnerId, apiKey, webhookId: samePartnerWebhookId } = await registerWebhook(api, samePartner.url);
    const deliveriesOf = (webhookId: string) =>
      api.database.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.webhookId, webhookId));
    const slow = await api.request("/api/partner/v1/webhooks", {
      method: "POST",
      apiKey,
      json: { url: hanging.url, events: ["spin.large_win"] },
    });
    expect(slow.status).toBe(201);
    const other = await registerWebhook(api, otherPartner.url);

    // A backlog of 300 events for both of the first partner's webhooks, in one fan-out.
    const backlog = 300;
    const started = performance.now();
    const event = { partnerId, environment: "sandbox" as const, type: "spin.large_win" as const, data: { n: 1 } };
    await insertEvents(api.database.db, Array(backlog).fill(event));
    await notifyEvents(api.deps.producers);

    // The healthy webhook beside it gets the whole backlog in about the time it would alone...
    await eventually(() => samePartner.requests.length === backlog, 15_000);
    const samePartnerDoneMs = performance.now() - started;
    // ...and another partner's events, sent while the hanging endpoint's backlog waits, arrive as
    // quickly as they would without it.
    const latencies: number[] = [];
    for (let i = 0; i < 10; i++) {
      const sentAt = performance.now();
      await emitEvent(api, other.partnerId);
      await eventually(() => otherPartner.requests.length === i + 1, 10_000, 5);
      latencies.push(otherPartner.requests[i]!.at - sentAt);
    }
    const hangingSent = hanging.requests.length;
    expect(samePartnerDoneMs).toBeLessThan(4 * TIMEOUT_MS);
    expect(Math.max(...latencies)).toBeLessThan(TIMEOUT_MS);
    // Each process sent it at most 4 at once once it was seen hanging; the rest wait their turn.
    const elapsedMs = performance.now() - started;
    const sendsAtOnce = 2 * SLOW.slowEndpointInFlight;
    expect(hangingSent).toBeLessThan(backlog / 2);
    expect(hangingSent).toBeLessThanOrEqual(2 * 24 + sendsAtOnce * Math.ceil(elapsedMs / TIMEOUT_MS));

    // Waiting for a turn is not an attempt: every attempt counted was sent (or is on its way).
    const deliveries = await deliveriesOf(slow.body.id as string);
    const attempts = deliveries.reduce((sum, delivery) => sum + delivery.attempts, 0);
    expect(attempts).toBeGreaterThanOrEqual(hangingSent);
    expect(attempts).toBeLessThanOrEqual(hanging.requests.length + sendsAtOnce + 2 * 24);
    const waiting = deliveries.filter((delivery) => delivery.attempts === 0);
    expect(waiting.length).toBeGreaterThan(backlog / 2);
    expect(waiting.every((delivery) => delivery.status === "pending" && delivery.nextAttemptAt)).toBe(true);
    const healthy = await deliveriesOf(samePartnerWebhookId);
    expect(healthy.filter((delivery) => delivery.status === "succeeded")).toHaveLength(backlog);
  });
});
