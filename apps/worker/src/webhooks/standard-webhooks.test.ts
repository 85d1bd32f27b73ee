import {
  deliveriesOf,
  deliveryWhen,
  emitEvent,
  eventually,
  type Received,
  registerWebhook,
  startReceiver,
  webhooksWorldForFile,
} from "@outcomes/testkit/workers";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";

const world = webhooksWorldForFile({ WEBHOOK_RETRY_DELAYS_MS: "100,100,100,100", WEBHOOK_TIMEOUT_MS: "300" });

/**
 * A receiver as the Standard Webhooks libraries have partners write it: verify with the official
 * npm `standardwebhooks` package, then handle each `webhook-id` once.
 */
function deduplicatingReceiver(secret: string) {
  const verifier = new Webhook(secret);
  const handled: string[] = [];
  const duplicates: string[] = [];
  const handle = (request: Received) => {
    const headers = request.headers as Record<string, string>;
    const event = verifier.verify(request.rawBody.toString("utf8"), headers) as { id: string };
    const id = headers["webhook-id"]!;
    if (handled.includes(id)) duplicates.push(id);
    else handled.push(id);
    return event;
  };
  return { handle, handled, duplicates };
}

describe("webhook-id is the event's id (CONTRACT §18)", () => {
  it("is the same on a retry, a redelivery and a recover, so a Standard Webhooks receiver sees duplicates", async () => {
    // Attempt 1 fails, attempt 2 succeeds; later the receiver fails everything until the recover.
    const target = await startReceiver((_request, index) => (index === 0 ? 500 : 200));
    try {
      const { partnerId, apiKey, webhookId, secret } = await registerWebhook(world.api, target.url);
      const since = new Date().toISOString();
      const event = await emitEvent(world.api, partnerId);
      const first = await deliveryWhen(world.api, apiKey, webhookId, "succeeded");
      expect(first.attempts).toBe(2);

      const redelivered = await world.api.request(
        `/api/partner/v1/webhooks/${webhookId}/deliveries/${first.id}/redeliver`,
        {
          method: "POST",
          apiKey,
        },
      );
      expect(redelivered.status).toBe(202);
      await eventually(() => target.requests.length === 3);

      // A second event whose delivery fails all 5 attempts, then is recovered.
      target.setReply(() => 500);
      const lost = await emitEvent(world.api, partnerId);
      await eventually(async () =>
        (await deliveriesOf(world.api, apiKey, webhookId)).some((d) => d.status === "failed"),
      );
      target.setReply(() => 200);
      const recovered = await world.api.request(`/api/partner/v1/webhooks/${webhookId}/recover`, {
        method: "POST",
        apiKey,
        json: { since },
      });
      expect(recovered.body).toEqual({ recovered: 1 });
      await eventually(() => target.requests.length === 9);

      const receiver = deduplicatingReceiver(secret);
      const events = target.requests.map((request) => receiver.handle(request));
      // Every request verifies with the official library, and carries its event's id as webhook-id.
      expect(events.map((each) => each.id)).toEqual([...Array(3).fill(event.id), ...Array(6).fill(lost.id)]);
      expect(target.requests.map((request) => request.headers["webhook-id"])).toEqual(events.map((each) => each.id));
      // Two events handled once each; the retry, the redelivery and the recover are duplicates.
      expect(receiver.handled).toEqual([event.id, lost.id]);
      expect(receiver.duplicates).toEqual([...Array(2).fill(event.id), ...Array(5).fill(lost.id)]);
      // X-Service-Delivery-Id stays the delivery's id: one per delivery, four deliveries.
      const deliveryIds = new Set(target.requests.map((request) => request.headers["x-service-delivery-id"]));
      expect(deliveryIds.size).toBe(4);
      const listed = await deliveriesOf(world.api, apiKey, webhookId);
      expect(new Set(listed.map((delivery) => delivery.id))).toEqual(deliveryIds);
    } finally {
      await target.close();
    }
  });
});
