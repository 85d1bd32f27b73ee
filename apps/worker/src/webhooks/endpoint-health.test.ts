import type { EventType } from "@outcomes/core";
import { verifyStandardWebhook } from "@outcomes/sdk";
import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import { cliAgainst } from "@outcomes/testkit/cli";
import {
  deliveriesOf,
  emitEvent,
  eventually,
  type Reply,
  receiverSet,
  registerWebhook,
  startRole,
} from "@outcomes/testkit/workers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { webhooksRole } from "./index.js";

/**
 * Endpoint health (CONTRACT §18) through the real worker, receivers on loopback and the partner and
 * operator APIs. The worker's health clock is the test's: days pass by moving it, not by waiting.
 */
const HOUR = 3_600_000;
let clockOffsetMs = 0;
const clock = () => new Date(Date.now() + clockOffsetMs);

let api: TestApi;
let worker: Awaited<ReturnType<typeof startRole>>;
const receivers = receiverSet();
const { cliJson } = cliAgainst(() => api);

beforeAll(async () => {
  api = await startTestApi({ WEBHOOK_RETRY_DELAYS_MS: "30,30,30,30", WEBHOOK_TIMEOUT_MS: "300" });
  worker = await startRole(api, webhooksRole({ pollIntervalMs: 50, now: clock }));
});
afterAll(async () => {
  await worker?.close();
  await receivers.closeAll();
  await api?.close();
});

const receiver = (reply: (index: number) => Reply) => receivers.start((_request, index) => reply(index));

/** Another webhook of the same partner. */
async function addWebhook(apiKey: string, url: string, events: EventType[]) {
  const response = await api.request("/api/partner/v1/webhooks", { method: "POST", apiKey, json: { url, events } });
  expect(response.status).toBe(201);
  return response.body as { id: string; secret: string };
}

const webhookOf = async (apiKey: string, webhookId: string) => {
  const list = await api.request("/api/partner/v1/webhooks", { apiKey });
  return list.body.webhooks.find((webhook: { id: string }) => webhook.id === webhookId);
};

/** Emits an event and waits until its delivery to `webhookId` has ended, like every one before it. */
async function eventThatEnds(partnerId: string, apiKey: string, webhookId: string) {
  const before = (await deliveriesOf(api, apiKey, webhookId)).length;
  const event = await emitEvent(api, partnerId);
  await eventually(async () => {
    const deliveries = await deliveriesOf(api, apiKey, webhookId);
    return (
      deliveries.length === before + 1 && deliveries.every((d) => d.status === "succeeded" || d.status === "failed")
    );
  });
  return event;
}

describe("an endpoint failing for WEBHOOK_DISABLE_AFTER_HOURS (120) with at least 10 attempts", () => {
  it("is disabled, its open deliveries end failed, and the partner's other subscribed webhooks are told", async () => {
    const dead = await receiver(() => 500);
    const { partnerId, apiKey, webhookId } = await registerWebhook(api, dead.url);
    const watcher = await receiver(() => 200);
    const told = await addWebhook(apiKey, watcher.url, ["webhook.disabled"]);
    const unsubscribed = await receiver(() => 200);
    await addWebhook(apiKey, unsubscribed.url, ["spin.large_win"]);

    // Two events, ten failed attempts at once: not yet 120 hours.
    await eventThatEnds(partnerId, apiKey, webhookId);
    await eventThatEnds(partnerId, apiKey, webhookId);
    expect(dead.requests).toHaveLength(10);
    expect(await webhookOf(apiKey, webhookId)).toMatchObject({ isActive: true, disabledAt: null });

    // 119 hours on: still failing, still not 120 hours.
    clockOffsetMs += 119 * HOUR;
    await eventThatEnds(partnerId, apiKey, webhookId);
    expect(dead.requests).toHaveLength(15);
    expect((await webhookOf(apiKey, webhookId)).isActive).toBe(true);

    // 120 hours since the first failure: the next failed attempt disables it.
    clockOffsetMs += 1 * HOUR;
    await emitEvent(api, partnerId);
    const disabled = await eventually(async () => {
      const webhook = await webhookOf(apiKey, webhookId);
      return !webhook.isActive && webhook;
    });
    expect(dead.requests).toHaveLength(16);
    expect(disabled).toMatchObject({ deletedAt: null, disabledReason: expect.stringMatching(/120 hours/) });
    expect(Math.abs(Date.parse(disabled.disabledAt) - clock().getTime())).toBeLessThan(60_000);
    const [newest] = await deliveriesOf(api, apiKey, webhookId);
    expect(newest).toMatchObject({ status: "failed", attempts: 1, lastResponseStatus: 500, nextAttemptAt: null });
    expect(newest!.lastError).toMatch(/^Webhook was disabled \(No attempt succeeded for 120 hours/);

    // The event: in the log, and delivered to the subscribed webhook only (signed as any delivery).
    const log = await api.request("/api/partner/v1/events?type=webhook.disabled", { apiKey });
    expect(log.body.events).toHaveLength(1);
    const event = log.body.events[0];
    expect(event.data).toEqual({
      webhookId,
      url: dead.url,
      disabledAt: disabled.disabledAt,
      reason: disabled.disabledReason,
      lastResponseStatus: 500,
    });
    const [received] = await eventually(() => watcher.requests.length === 1 && watcher.requests);
    expect(JSON.parse(received!.rawBody.toString("utf8"))).toEqual(event);
    expect(received!.headers["x-service-event"]).toBe("webhook.disabled");
    expect(verifyStandardWebhook({ rawBody: received!.rawBody, headers: received!.headers, secret: told.secret })).toBe(
      true,
    );
    expect(unsubscribed.requests.every((request) => request.headers["x-service-event"] === "spin.large_win")).toBe(
      true,
    );

    // Nothing more is sent to it; operators see it.
    await emitEvent(api, partnerId);
    await eventually(() => unsubscribed.requests.length === 5);
    expect(dead.requests).toHaveLength(16);
    const listed = await api.request("/api/admin/v1/webhooks/disabled?limit=100", { admin: true });
    expect(listed.body.webhooks).toContainEqual({ ...disabled, partnerId, environment: "sandbox" });
    expect((await cliJson("webhooks", "disabled", "--limit", "100")).webhooks).toEqual(listed.body.webhooks);
  });

  it("needs 10 failed attempts however long it has failed, and a success starts the count again", async () => {
    const flaky = await receiver(() => 500);
    const { partnerId, apiKey, webhookId } = await registerWebhook(api, flaky.url);
    await eventThatEnds(partnerId, apiKey, webhookId);

    // 5 failures, then 200 hours later 5 more: disabled on the 10th, not before (which would close
    // the delivery and leave fewer attempts).
    clockOffsetMs += 200 * HOUR;
    await emitEvent(api, partnerId);
    await eventually(async () => !(await webhookOf(apiKey, webhookId)).isActive);
    expect(flaky.requests).toHaveLength(10);

    // Another endpoint: a success clears its failing run, so 200 hours after its first failure it
    // is failing for 0 hours.
    const again = await registerWebhook(api, flaky.url);
    await eventThatEnds(again.partnerId, again.apiKey, again.webhookId);
    flaky.setReply(() => 200);
    await eventThatEnds(again.partnerId, again.apiKey, again.webhookId);
    flaky.setReply(() => 500);
    clockOffsetMs += 200 * HOUR;
    await eventThatEnds(again.partnerId, again.apiKey, again.webhookId);
    await eventThatEnds(again.partnerId, again.apiKey, again.webhookId);
    expect((await webhookOf(again.apiKey, again.webhookId)).isActive).toBe(true);
  });
});

describe("a receiver answering 410 Gone", () => {
  it("disables its endpoint at once; enable turns it back on, and recover delivers what it missed", async () => {
    const gone = await receiver(() => 410);
    const { partnerId, apiKey, webhookId, secret } = await registerWebhook(api, gone.url);
    const since = new Date().toISOString();
    const missed = await emitEvent(api, partnerId);
    const disabled = await eventually(async () => {
      const webhook = await webhookOf(apiKey, webhookId);
      return !webhook.isActive && webhook;
    });
    expect(disabled.disabledReason).toBe("Receiver answered HTTP 410 Gone");
    const [delivery] = await deliveriesOf(api, apiKey, webhookId);
    expect(delivery).toMatchObject({ status: "failed", attempts: 1, lastResponseStatus: 410 });
    const [event] = (await api.request("/api/partner/v1/events?type=webhook.disabled", { apiKey })).body.events;
    expect(event.data).toMatchObject({ webhookId, reason: "Receiver answered HTTP 410 Gone", lastResponseStatus: 410 });
    expect(gone.requests).toHaveLength(1);

    // Disabled: recover and redeliver are refused until it is enabled.
    const path = `/api/partner/v1/webhooks/${webhookId}`;
    const recover = () => api.request(`${path}/recover`, { method: "POST", apiKey, json: { since } });
    const refused = await recover();
    expect([refused.status, refused.body.errorCode, refused.body.message]).toEqual([
      400,
      "KS-4101",
      "Webhook is disabled: enable it first (POST /webhooks/{webhookId}/enable)",
    ]);
    const redeliver = await api.request(`${path}/deliveries/${delivery!.id}/redeliver`, { method: "POST", apiKey });
    expect([redeliver.status, redeliver.body.errorCode]).toEqual([400, "KS-4101"]);

    gone.setReply(() => 200);
    const enabled = await api.request(`${path}/enable`, { method: "POST", apiKey });
    expect(enabled.status).toBe(200);
    expect(enabled.body).toMatchObject({ id: webhookId, isActive: true, disabledAt: null, disabledReason: null });
    expect((await api.request(`${path}/enable`, { method: "POST", apiKey })).body).toEqual(enabled.body);
    const listed = await api.request("/api/admin/v1/webhooks/disabled?limit=100", { admin: true });
    expect(listed.body.webhooks.map((webhook: { id: string }) => webhook.id)).not.toContain(webhookId);

    expect((await recover()).body).toEqual({ recovered: 1 });
    await eventually(() => gone.requests.length === 2);
    const fresh = await emitEvent(api, partnerId);
    await eventually(() => gone.requests.length === 3);
    const bodies = gone.requests.slice(1).map((request) => JSON.parse(request.rawBody.toString("utf8")).id);
    expect(bodies).toEqual([missed.id, fresh.id]);
    expect(
      verifyStandardWebhook({ rawBody: gone.requests[2]!.rawBody, headers: gone.requests[2]!.headers, secret }),
    ).toBe(true);
  });
});
