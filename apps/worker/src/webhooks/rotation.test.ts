import { signPayload, verifyStandardWebhook } from "@outcomes/sdk";
import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import {
  deliveriesOf,
  emitEvent,
  eventually,
  type Received,
  type Receiver,
  registerWebhook,
  startReceiver,
  startRole,
} from "@outcomes/testkit/workers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { webhooksRole } from "./index.js";

/**
 * Secret rotation with deliveries in flight (CONTRACT §11). The worker sends at most CONCURRENCY
 * requests at a time, so once the receiver holds that many, nothing is on its way: the test rotates
 * and the receiver changes its secret only at such moments, and each request is checked with the
 * secret the receiver held when it arrived.
 */
const CONCURRENCY = 4;

let api: TestApi;
let worker: Awaited<ReturnType<typeof startRole>>;
const receivers: Receiver[] = [];

beforeAll(async () => {
  // Long enough that no held request times out; short waits between attempts.
  api = await startTestApi({ WEBHOOK_RETRY_DELAYS_MS: "150,150,150,150", WEBHOOK_TIMEOUT_MS: "20000" });
  worker = await startRole(api, webhooksRole({ pollIntervalMs: 50, concurrency: CONCURRENCY }));
});
afterAll(async () => {
  await worker?.close();
  await Promise.all(receivers.map((receiver) => receiver.close()));
  await api?.close();
});

const header = (request: Received, name: string) => String(request.headers[name]);
const rotateSecret = async (apiKey: string, webhookId: string, overlapSeconds: number) => {
  const response = await api.request(`/api/partner/v1/webhooks/${webhookId}/rotate-secret`, {
    method: "POST",
    apiKey,
    json: { overlapSeconds },
  });
  expect(response.status).toBe(200);
  return response.body as { secret: string; previousSecretExpiresAt: string };
};

interface Arrival {
  deliveryId: string;
  attempt: number;
  signatures: number;
  held: "old" | "new";
  verified: boolean;
  serviceSignature: string;
  rawBody: Buffer;
}

describe("rotate-secret with deliveries in flight", () => {
  it("every attempt verifies with the secret the receiver held when it arrived, retries of older deliveries too", async () => {
    const arrivals: Arrival[] = [];
    let held = { name: "old" as "old" | "new", secret: "" };
    let answer: number | "hang" = "hang";
    const receiver = await startReceiver((request) => {
      arrivals.push({
        deliveryId: header(request, "x-service-delivery-id"),
        attempt: Number(header(request, "x-service-attempt")),
        signatures: header(request, "webhook-signature").split(" ").length,
        held: held.name,
        verified: verifyStandardWebhook({ rawBody: request.rawBody, headers: request.headers, secret: held.secret }),
        serviceSignature: header(request, "x-service-signature"),
        rawBody: request.rawBody,
      });
      return answer;
    });
    receivers.push(receiver);
    const hook = await registerWebhook(api, receiver.url);
    held = { name: "old", secret: hook.secret };
    const heldNow = (count: number) => eventually(() => arrivals.length === count, 10_000);

    for (let i = 0; i < 10; i++) await emitEvent(api, hook.partnerId, "spin.large_win", { spinId: `spn_${i}` });
    // First attempts of four deliveries are held: signed before the rotation, still unanswered.
    await heldNow(CONCURRENCY);
    const rotated = await rotateSecret(hook.apiKey, hook.webhookId, 3600);
    // They fail; their retries and the next first attempts arrive while the receiver still has the old secret.
    receiver.release(500);
    await heldNow(2 * CONCURRENCY);
    // The receiver takes the new secret while nothing is on its way, then answers again.
    held = { name: "new", secret: rotated.secret };
    answer = 200;
    receiver.release(503);
    for (let i = 10; i < 13; i++) await emitEvent(api, hook.partnerId, "spin.large_win", { spinId: `spn_${i}` });

    const deliveries = await eventually(async () => {
      const list = await deliveriesOf(api, hook.apiKey, hook.webhookId);
      return list.length === 13 && list.every((delivery) => delivery.status === "succeeded") && list;
    }, 15_000);
    const before = arrivals.slice(0, CONCURRENCY);
    const whileOld = arrivals.slice(CONCURRENCY, 2 * CONCURRENCY);
    const afterUpdate = arrivals.slice(2 * CONCURRENCY);

    expect(arrivals.every((arrival) => arrival.verified)).toBe(true);
    expect(before.every((arrival) => arrival.signatures === 1 && arrival.held === "old")).toBe(true);
    expect(before.every((arrival) => arrival.serviceSignature === signPayload(arrival.rawBody, hook.secret))).toBe(
      true,
    );
    expect([...whileOld, ...afterUpdate].every((arrival) => arrival.signatures === 2)).toBe(true);
    expect(
      [...whileOld, ...afterUpdate].every(
        (arrival) => arrival.serviceSignature === signPayload(arrival.rawBody, rotated.secret),
      ),
    ).toBe(true);
    expect(whileOld.every((arrival) => arrival.held === "old")).toBe(true);
    expect(afterUpdate.every((arrival) => arrival.held === "new")).toBe(true);
    // The deliveries first tried before the rotation were retried after it, and verified each time.
    const retried = before.map((first) =>
      arrivals.filter((arrival) => arrival.deliveryId === first.deliveryId).map((arrival) => arrival.attempt),
    );
    for (const attempts of retried) expect(attempts.length).toBeGreaterThanOrEqual(2);
    expect(afterUpdate.some((arrival) => before.some((first) => first.deliveryId === arrival.deliveryId))).toBe(true);
    expect(new Set(arrivals.map((arrival) => arrival.deliveryId)).size).toBe(deliveries.length);
  });

  it("signs with the new secret only once the overlap is over", async () => {
    const receiver = await startReceiver();
    receivers.push(receiver);
    const hook = await registerWebhook(api, receiver.url);
    const rotated = await rotateSecret(hook.apiKey, hook.webhookId, 1);

    await emitEvent(api, hook.partnerId);
    const [during] = await eventually(() => receiver.requests.length === 1 && receiver.requests);
    expect(header(during!, "webhook-signature").split(" ")).toHaveLength(2);
    for (const secret of [hook.secret, rotated.secret]) {
      expect(verifyStandardWebhook({ rawBody: during!.rawBody, headers: during!.headers, secret })).toBe(true);
    }

    const wait = Date.parse(rotated.previousSecretExpiresAt) - Date.now();
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, wait) + 50));
    await emitEvent(api, hook.partnerId);
    const after = (await eventually(() => receiver.requests.length === 2 && receiver.requests))[1]!;
    expect(header(after, "webhook-signature").split(" ")).toHaveLength(1);
    expect(verifyStandardWebhook({ rawBody: after.rawBody, headers: after.headers, secret: rotated.secret })).toBe(
      true,
    );
    expect(verifyStandardWebhook({ rawBody: after.rawBody, headers: after.headers, secret: hook.secret })).toBe(false);
    expect(header(after, "x-service-signature")).toBe(signPayload(after.rawBody, rotated.secret));
  });
});
