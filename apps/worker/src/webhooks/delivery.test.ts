import { setTimeout as sleep } from "node:timers/promises";
import { webhookRecoveries } from "@outcomes/db";
import { verifyStandardWebhook, verifyWebhookSignature } from "@outcomes/sdk";
import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import {
  deliveriesOf,
  deliveryRow,
  deliveryWhen,
  emitEvent,
  eventually,
  receiverSet,
  registerWebhook,
  startRole,
} from "@outcomes/testkit/workers";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { webhooksRole } from "./index.js";

const DELAYS = [100, 200, 300, 400];
const TIMEOUT_MS = 300;

let api: TestApi;
let worker: Awaited<ReturnType<typeof startRole>>;
const receivers = receiverSet();

beforeAll(async () => {
  api = await startTestApi({ WEBHOOK_RETRY_DELAYS_MS: DELAYS.join(","), WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS) });
  worker = await startRole(api, webhooksRole({ pollIntervalMs: 100 }));
});
afterAll(async () => {
  await worker?.close();
  await receivers.closeAll();
  await api?.close();
});

const receiver = receivers.start;

const header = (request: { headers: Record<string, unknown> }, name: string) => String(request.headers[name]);

describe("signed delivery", () => {
  it("delivers an outbox event once, signed in both header families over the raw bytes", async () => {
    const target = await receiver();
    const { partnerId, apiKey, webhookId, secret } = await registerWebhook(api, target.url);
    const event = await emitEvent(api, partnerId, "spin.large_win", { spinId: "spn_1", payoutUsd: 1234.5 });

    const [request] = await eventually(() => target.requests.length === 1 && target.requests);
    const rawBody = request!.rawBody;
    expect(JSON.parse(rawBody.toString("utf8"))).toEqual(event);
    expect(header(request!, "content-type")).toBe("application/json");
    expect(header(request!, "x-service-event")).toBe("spin.large_win");
    expect(header(request!, "x-service-attempt")).toBe("1");
    const deliveryId = header(request!, "x-service-delivery-id");
    expect(header(request!, "webhook-id")).toBe(event.id);
    expect(verifyWebhookSignature({ rawBody, signatureHeader: header(request!, "x-service-signature"), secret })).toBe(
      true,
    );
    expect(verifyStandardWebhook({ rawBody, headers: request!.headers as Record<string, string>, secret })).toBe(true);
    // Another webhook's secret does not verify it.
    expect(
      verifyWebhookSignature({
        rawBody,
        signatureHeader: header(request!, "x-service-signature"),
        secret: `${secret}A`,
      }),
    ).toBe(false);

    const [delivery] = await eventually(async () => {
      const list = await deliveriesOf(api, apiKey, webhookId);
      return list[0]?.status === "succeeded" && list;
    });
    expect(delivery).toMatchObject({
      id: deliveryId,
      event: "spin.large_win",
      attempts: 1,
      maxAttempts: 5,
      lastResponseStatus: 200,
      lastError: null,
      nextAttemptAt: null,
    });
    expect(Date.parse(delivery!.completedAt)).toBeGreaterThanOrEqual(Date.parse(delivery!.createdAt));
    await sleep(300);
    expect(target.requests).toHaveLength(1);
  });

  it("retries after two failures and succeeds on the third attempt with the same delivery id and bytes", async () => {
    const target = await receiver((_request, index) => (index < 2 ? 503 : 204));
    const { partnerId, webhookId, apiKey } = await registerWebhook(api, target.url);
    await emitEvent(api, partnerId);

    const deliveryId = await eventually(async () => {
      const [delivery] = await deliveriesOf(api, apiKey, webhookId);
      return delivery?.status === "succeeded" && (delivery.id as string);
    });
    expect(target.requests.map((request) => header(request, "x-service-attempt"))).toEqual(["1", "2", "3"]);
    expect(new Set(target.requests.map((request) => header(request, "x-service-delivery-id")))).toEqual(
      new Set([deliveryId]),
    );
    expect(new Set(target.requests.map((request) => request.rawBody.toString("hex"))).size).toBe(1);
    expect(new Set(target.requests.map((request) => header(request, "x-service-signature"))).size).toBe(1);
    expect(await deliveryRow(api, deliveryId)).toMatchObject({
      status: "succeeded",
      attempts: 3,
      lastResponseStatus: 204,
    });
  });

  it("makes exactly 5 attempts with at least the configured waits between them, then fails", async () => {
    const target = await receiver(() => 500);
    const { partnerId, webhookId, apiKey } = await registerWebhook(api, target.url);
    await emitEvent(api, partnerId);

    const retrying = await deliveryWhen(api, apiKey, webhookId, "retrying");
    expect(retrying.lastResponseStatus).toBe(500);
    expect(retrying.lastError).toBe("Receiver answered HTTP 500");
    expect(Date.parse(retrying.nextAttemptAt)).toBeGreaterThan(Date.parse(retrying.createdAt));

    const failed = await deliveryWhen(api, apiKey, webhookId, "failed");
    expect(failed).toMatchObject({ attempts: 5, maxAttempts: 5, lastResponseStatus: 500, nextAttemptAt: null });
    expect(failed.completedAt).not.toBeNull();
    const gaps = target.requests.slice(1).map((request, index) => request.at - target.requests[index]!.at);
    expect(gaps).toHaveLength(4);
    for (const [index, gap] of gaps.entries()) expect(gap).toBeGreaterThanOrEqual(DELAYS[index]!);
    await sleep(600);
    expect(target.requests).toHaveLength(5);
  });

  it("counts a receiver that does not answer within WEBHOOK_TIMEOUT_MS as a failed attempt", async () => {
    const target = await receiver((_request, index) => (index === 0 ? "hang" : 200));
    const { partnerId, webhookId, apiKey } = await registerWebhook(api, target.url);
    await emitEvent(api, partnerId);

    const delivery = await deliveryWhen(api, apiKey, webhookId, "succeeded");
    expect(delivery.attempts).toBe(2);
    expect(target.requests[1]!.at - target.requests[0]!.at).toBeGreaterThanOrEqual(TIMEOUT_MS + DELAYS[0]!);
  });

  it("stops retrying once the webhook is deleted", async () => {
    const target = await receiver(() => 500);
    const { partnerId, webhookId, apiKey } = await registerWebhook(api, target.url);
    await emitEvent(api, partnerId);
    await eventually(async () => (await deliveriesOf(api, apiKey, webhookId))[0]?.status === "retrying");

    const deleted = await api.request(`/api/partner/v1/webhooks/${webhookId}`, { method: "DELETE", apiKey });
    expect(deleted.body.isActive).toBe(false);
    const attemptsAtDelete = target.requests.length;
    await sleep(DELAYS.reduce((sum, delay) => sum + delay, 0) + 300);
    expect(target.requests).toHaveLength(attemptsAtDelete);
    const [delivery] = await deliveriesOf(api, apiKey, webhookId);
    expect(delivery).toMatchObject({ status: "failed", nextAttemptAt: null });
    expect(delivery!.lastError).toMatch(/deleted/);

    // Later events reach it no more either.
    await emitEvent(api, partnerId);
    await sleep(400);
    expect(await deliveriesOf(api, apiKey, webhookId)).toHaveLength(1);
  });

  it("records a delivery the receiver answered 2xx as succeeded although the webhook was deleted during the send", async () => {
    // The receiver holds the sends while the test deletes and reads: a worker with the file's 300 ms
    // timeout would count them failed first on a loaded machine, so one that waits long enough.
    await worker.close();
    worker = await startRole(api, webhooksRole({ pollIntervalMs: 100 }), { WEBHOOK_TIMEOUT_MS: 30_000 });
    const target = await receiver(() => "hang");
    const { partnerId, webhookId, apiKey } = await registerWebhook(api, target.url);
    await Promise.all([emitEvent(api, partnerId), emitEvent(api, partnerId), emitEvent(api, partnerId)]);
    await eventually(() => target.requests.length === 3);

    // Deleted while the receiver holds all three: the delete closes them as failed at once...
    await api.request(`/api/partner/v1/webhooks/${webhookId}`, { method: "DELETE", apiKey });
    const closed = await deliveriesOf(api, apiKey, webhookId);
    expect(closed.map((delivery) => delivery.status)).toEqual(["failed", "failed", "failed"]);
    // ...and then the receiver accepts them: that is what the record says (issue #33, item 2).
    target.release(200);
    const answered = await eventually(async () => {
      const deliveries = await deliveriesOf(api, apiKey, webhookId);
      return deliveries.every((delivery) => delivery.status === "succeeded") && deliveries;
    });
    for (const delivery of answered) {
      expect(delivery).toMatchObject({ attempts: 1, lastResponseStatus: 200, lastError: null, nextAttemptAt: null });
    }
    expect(target.requests).toHaveLength(3);
    await worker.close();
    worker = await startRole(api, webhooksRole({ pollIntervalMs: 100 }));
  });

  it("redelivers an event as a new delivery with the same body", async () => {
    const target = await receiver();
    const { partnerId, webhookId, apiKey, secret } = await registerWebhook(api, target.url);
    await emitEvent(api, partnerId);
    const first = await deliveryWhen(api, apiKey, webhookId, "succeeded");

    const redeliver = await api.request(`/api/partner/v1/webhooks/${webhookId}/deliveries/${first.id}/redeliver`, {
      method: "POST",
      apiKey,
    });
    expect(redeliver.status).toBe(202);
    expect(redeliver.body).toMatchObject({ event: "spin.large_win", status: "pending", attempts: 0, maxAttempts: 5 });
    expect(redeliver.body.id).not.toBe(first.id);

    await eventually(() => target.requests.length === 2);
    const [original, again] = target.requests;
    expect(header(again!, "x-service-delivery-id")).toBe(redeliver.body.id);
    expect(header(again!, "x-service-attempt")).toBe("1");
    expect(again!.rawBody.equals(original!.rawBody)).toBe(true);
    expect(
      verifyWebhookSignature({
        rawBody: again!.rawBody,
        signatureHeader: header(again!, "x-service-signature"),
        secret,
      }),
    ).toBe(true);

    const list = await eventually(async () => {
      const deliveries = await deliveriesOf(api, apiKey, webhookId);
      return deliveries[0]?.status === "succeeded" && deliveries;
    });
    expect(list.map((delivery) => delivery.id)).toEqual([redeliver.body.id, first.id]);
  });

  it("recovers the events an outage lost: each failed delivery once more, same event and bytes", async () => {
    const target = await receiver(() => 500);
    const { partnerId, webhookId, apiKey, secret } = await registerWebhook(api, target.url);
    const since = new Date().toISOString();
    const events = [await emitEvent(api, partnerId), await emitEvent(api, partnerId)];
    const failed = await eventually(async () => {
      const deliveries = await deliveriesOf(api, apiKey, webhookId);
      return deliveries.length === 2 && deliveries.every((delivery) => delivery.status === "failed") && deliveries;
    });
    expect(target.requests).toHaveLength(10);
    const recover = () =>
      api.request(`/api/partner/v1/webhooks/${webhookId}/recover`, { method: "POST", apiKey, json: { since } });

    // Still down: the recovered deliveries fail in their turn, and a second recover takes those.
    const recovered = await recover();
    expect([recovered.status, recovered.body]).toEqual([202, { recovered: 2 }]);
    await eventually(async () => {
      const deliveries = await deliveriesOf(api, apiKey, webhookId);
      return deliveries.length === 4 && deliveries.every((delivery) => delivery.status === "failed");
    });
    expect(target.requests).toHaveLength(20);

    // The receiver is back.
    target.setReply(() => 200);
    expect((await recover()).body).toEqual({ recovered: 2 });
    await eventually(() => target.requests.length === 22);
    const again = target.requests.slice(20);
    expect(new Set(again.map((request) => JSON.parse(request.rawBody.toString("utf8")).id))).toEqual(
      new Set(events.map((event) => event.id)),
    );
    for (const request of again) {
      const earlier = target.requests.filter((other) => other !== request && other.rawBody.equals(request.rawBody));
      // The original delivery's 5 attempts and the first recovery's 5, each under its own delivery id.
      expect(earlier).toHaveLength(10);
      const ids = new Set(earlier.map((other) => header(other, "x-service-delivery-id")));
      expect(ids.size).toBe(2);
      expect(ids.has(header(request, "x-service-delivery-id"))).toBe(false);
      expect(header(request, "x-service-attempt")).toBe("1");
      expect(verifyStandardWebhook({ rawBody: request.rawBody, headers: request.headers, secret })).toBe(true);
    }
    const after = await eventually(async () => {
      const deliveries = await deliveriesOf(api, apiKey, webhookId);
      return deliveries.filter((delivery) => delivery.status === "succeeded").length === 2 && deliveries;
    });
    expect(after).toHaveLength(6);
    expect(after.filter((delivery) => failed.some((old) => old.id === delivery.id))).toHaveLength(2);

    // Each recover was a job of the webhook-recovery queue, its progress shown there.
    const recoveries = await api.database.db
      .select()
      .from(webhookRecoveries)
      .where(eq(webhookRecoveries.webhookId, webhookId));
    expect(recoveries).toHaveLength(2);
    for (const recovery of recoveries) {
      expect(recovery).toMatchObject({ status: "done", counted: 2, redelivered: 2 });
      const job = await api.deps.producers.queues["webhook-recovery"].getJob(recovery.id);
      expect(job?.progress).toEqual({ status: "done", redelivered: 2, counted: 2 });
    }
  });
});
