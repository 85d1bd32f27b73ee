import { insertEvents, webhookDeliveries } from "@outcomes/db";
import { notifyEvents } from "@outcomes/queue";
import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import {
  deliveriesOf,
  emitEvent,
  eventually,
  receiverSet,
  registerWebhook,
  startRole,
} from "@outcomes/testkit/workers";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { webhooksRole } from "./index.js";

let api: TestApi;
let workers: Array<Awaited<ReturnType<typeof startRole>>>;
const receivers = receiverSet();

beforeAll(async () => {
  api = await startTestApi({ WEBHOOK_RETRY_DELAYS_MS: "100,100,100,100" });
  // Two worker processes' worth of the role: the pace is kept across them (one schedule in Redis).
  workers = [
    await startRole(api, webhooksRole({ pollIntervalMs: 50 })),
    await startRole(api, webhooksRole({ pollIntervalMs: 50 })),
  ];
});
afterAll(async () => {
  await Promise.all(workers.map((worker) => worker.close()));
  await receivers.closeAll();
  await api?.close();
});

const receiver = receivers.start;

const sequenceOf = (request: { rawBody: Buffer }) => JSON.parse(request.rawBody.toString("utf8")).sequence as number;

describe("rateLimitPerSecond (CONTRACT §18)", () => {
  it("gives a paced webhook's deliveries turns a slot apart, in order, sent as first attempts, delaying no other webhook", async () => {
    const paced = await receiver();
    const normal = await receiver();
    const { partnerId, apiKey, webhookId } = await registerWebhook(api, normal.url);
    const registered = await api.request("/api/partner/v1/webhooks", {
      method: "POST",
      apiKey,
      json: { url: paced.url, events: ["spin.large_win"], rateLimitPerSecond: 5 },
    });
    expect(registered.status).toBe(201);
    const pacedId = registered.body.id as string;

    // One transaction's events: one fan-out, so they get their turns in their order. (Events fanned
    // out at the same moment by two worker processes may swap turns; two sends a turn apart may
    // arrive swapped on a busy machine, as any concurrent deliveries may.)
    const started = performance.now();
    const count = 15;
    const event = { partnerId, environment: "sandbox" as const, type: "spin.large_win" as const, data: { n: 1 } };
    await insertEvents(api.database.db, Array(count).fill(event));
    await notifyEvents(api.deps.producers);

    // Turns are handed out in event order, a slot apart, and each waiting delivery shows its turn.
    const turns = await eventually(async () => {
      const made = await api.database.db
        .select()
        .from(webhookDeliveries)
        .where(eq(webhookDeliveries.webhookId, pacedId));
      const pending = made
        .filter((row) => row.status === "pending")
        .sort((a, b) => sequenceOf({ rawBody: Buffer.from(a.body) }) - sequenceOf({ rawBody: Buffer.from(b.body) }))
        .map((row) => row.nextAttemptAt!.getTime());
      // Written once the turns were handed out (after fan-out's commit).
      return made.length === count && new Set(pending).size === pending.length && pending;
    });
    expect(turns.length).toBeGreaterThan(count / 2);
    for (const [i, turn] of turns.slice(1).entries()) expect(turn - turns[i]!).toBeGreaterThanOrEqual(199);
    expect(turns.at(-1)).toBeGreaterThan(Date.now());
    // The webhook beside it gets every event at once...
    await eventually(() => normal.requests.length === count);
    const normalDone = performance.now() - started;
    // ...while the paced one takes a turn every 200 ms, each no earlier than its slot.
    await eventually(() => paced.requests.length === count, 15_000);
    expect(normalDone).toBeLessThan(paced.requests.at(-1)!.at - started);
    for (const [i, request] of paced.requests.entries()) {
      expect(request.at - started).toBeGreaterThanOrEqual(i * 200 - 20);
    }
    expect(new Set(paced.requests.map(sequenceOf)).size).toBe(count);
    expect(new Set(paced.requests.map((request) => request.headers["x-service-attempt"]))).toEqual(new Set(["1"]));

    // Waiting for its turn is no attempt: each delivery succeeded on its first.
    for (const id of [pacedId, webhookId]) {
      const deliveries = await eventually(async () => {
        const list = await deliveriesOf(api, apiKey, id);
        return list.every((delivery) => delivery.status === "succeeded") && list;
      });
      expect(deliveries.map((delivery) => delivery.attempts)).toEqual(Array(count).fill(1));
    }
  });

  it("paces retries too, and PATCH changes the pace", async () => {
    const paced = await receiver();
    paced.setReply((_request, index) => (index < 4 ? 503 : 200));
    const { partnerId, apiKey, webhookId } = await registerWebhook(api, paced.url);
    const patched = await api.request(`/api/partner/v1/webhooks/${webhookId}`, {
      method: "PATCH",
      apiKey,
      json: { rateLimitPerSecond: 2 },
    });
    expect(patched.body.rateLimitPerSecond).toBe(2);

    const started = performance.now();
    for (let i = 0; i < 4; i++) await emitEvent(api, partnerId);
    // 4 first attempts fail, then 4 retries succeed: 8 sends, at most 2 a second.
    await eventually(() => paced.requests.length === 8, 15_000);
    for (const [i, request] of paced.requests.entries()) {
      expect(request.at - started).toBeGreaterThanOrEqual(i * 500 - 20);
    }
    const deliveries = await eventually(async () => {
      const list = await deliveriesOf(api, apiKey, webhookId);
      return list.every((delivery) => delivery.status === "succeeded") && list;
    });
    expect(deliveries.map((delivery) => delivery.attempts)).toEqual([2, 2, 2, 2]);
  });
});
