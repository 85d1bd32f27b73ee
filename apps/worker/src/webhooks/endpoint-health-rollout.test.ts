import { events } from "@outcomes/db";
import {
  deliveriesOf,
  deliveryWhen,
  emitEvent,
  eventually,
  registerWebhook,
  webhooksWorldForFile,
} from "@outcomes/testkit/workers";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";

/**
 * Before release 3's rollout has finished (the `webhook-endpoint-health` gate), release 2's
 * processes may answer any request and run any job: every process answers and delivers as release 2
 * does, so nothing differs by which process a partner reached. Then `release finish` turns it on.
 */
// Retries a second and a half apart: the first attempt happens before `release finish`, the next after.
const world = webhooksWorldForFile(
  { WEBHOOK_RETRY_DELAYS_MS: "1500,1500,1500,1500" },
  { pollIntervalMs: 50 },
  { rollout: "running" },
);

/** An answer without its request id, to compare with what release 2 answers. */
const shape = (answer: { status: number; body: any }) => {
  const { requestId: _, ...body } = answer.body;
  return [answer.status, body];
};

describe("before the rollout of release 3 finished", () => {
  it("answers as release 2, disables nothing, and does it all once `release finish` has run", async () => {
    const gone = await world.receiver(() => 410);
    const { partnerId, apiKey, webhookId } = await registerWebhook(world.api, gone.url);
    const P = "/api/partner/v1";
    const register = (json: object) => world.api.request(`${P}/webhooks`, { method: "POST", apiKey, json });

    // Release 2 does not know the event type, the field or the routes.
    const subscribe = await register({ url: gone.url, events: ["webhook.disabled"] });
    expect([subscribe.status, subscribe.body.errorCode]).toEqual([400, "KS-4107"]);
    const paced = await register({ url: gone.url, events: ["spin.large_win"], rateLimitPerSecond: 5 });
    expect([paced.status, paced.body.errorCode]).toEqual([400, "KS-4101"]);
    const log = await world.api.request(`${P}/events?type=webhook.disabled`, { apiKey });
    expect([log.status, log.body.errorCode]).toEqual([400, "KS-4101"]);
    const unknownRoute = shape(await world.api.request(`${P}/no-such-route`, { method: "POST", apiKey, json: {} }));
    const path = `${P}/webhooks/${webhookId}`;
    expect(shape(await world.api.request(`${path}/enable`, { method: "POST", apiKey }))).toEqual(unknownRoute);
    const patch = await world.api.request(path, { method: "PATCH", apiKey, json: { rateLimitPerSecond: 5 } });
    expect(shape(patch)).toEqual(
      shape(await world.api.request(`${P}/no-such-route`, { method: "PATCH", apiKey, json: {} })),
    );
    const operators = await world.api.request("/api/admin/v1/webhooks/disabled", { admin: true });
    expect([operators.status, operators.body.errorCode]).toEqual([404, "KS-4215"]);

    // A 410 Gone is a failed attempt like any other: retried, nothing disabled, no event written.
    await emitEvent(world.api, partnerId);
    const retrying = await deliveryWhen(world.api, apiKey, webhookId, "retrying");
    expect(retrying).toMatchObject({ attempts: 1, lastResponseStatus: 410 });
    const listed = await world.api.request(`${P}/webhooks`, { apiKey });
    expect(listed.body.webhooks[0]).toMatchObject({ id: webhookId, isActive: true, disabledAt: null });
    expect(await world.api.database.db.select().from(events).where(eq(events.type, "webhook.disabled"))).toEqual([]);

    // Finished: the retry's 410 disables the endpoint, and everything above is on.
    expect((await world.api.request("/api/admin/v1/release/finish", { method: "POST", admin: true })).status).toBe(200);
    const disabled = await eventually(async () => {
      const [webhook] = (await world.api.request(`${P}/webhooks`, { apiKey })).body.webhooks;
      return webhook.isActive === false && webhook;
    }, 15_000);
    expect(disabled.disabledReason).toBe("Receiver answered HTTP 410 Gone");
    // Closed by the disable (the worker sees the finish within a second): no fifth attempt.
    const [closed] = await deliveriesOf(world.api, apiKey, webhookId);
    expect(closed).toMatchObject({ status: "failed", lastResponseStatus: 410 });
    expect(closed!.attempts).toBeLessThan(5);
    expect((await world.api.request(`${P}/events?type=webhook.disabled`, { apiKey })).body.events).toHaveLength(1);
    expect((await register({ url: gone.url, events: ["webhook.disabled"], rateLimitPerSecond: 5 })).status).toBe(201);
    expect((await world.api.request(`${path}/enable`, { method: "POST", apiKey })).body.isActive).toBe(true);
  });
});
