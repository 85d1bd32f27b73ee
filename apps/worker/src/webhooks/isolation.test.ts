import { setTimeout as sleep } from "node:timers/promises";
import { insertEvents, webhookDeliveries } from "@outcomes/db";
import { notifyEvents } from "@outcomes/queue";
import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import {
  emitEvent,
  eventually,
  type Received,
  type Receiver,
  registerWebhook,
  startReceiver,
  startRole,
} from "@outcomes/testkit/workers";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { webhooksRole } from "./index.js";

const TIMEOUT_MS = 4000;
/** WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT here. */
const PER_ENDPOINT = 2;
/** Sends in flight per worker process: fewer than the slow endpoint's backlog. */
const CONCURRENCY = 6;
const BACKLOG = 30;
const PROBES = 10;

let api: TestApi;
const receivers: Receiver[] = [];

beforeAll(async () => {
  api = await startTestApi({ WEBHOOK_RETRY_DELAYS_MS: "100,100,100,100" });
});
afterAll(async () => {
  await Promise.all(receivers.map((receiver) => receiver.close()));
  await api?.close();
});

async function receiver(reply?: Parameters<typeof startReceiver>[0]) {
  const started = await startReceiver(reply);
  receivers.push(started);
  return started;
}

const bodyOf = (request: Received) => JSON.parse(request.rawBody.toString("utf8"));
const deliveryIdOf = (request: Received) => String(request.headers["x-service-delivery-id"]);

describe.each([1, 2])("one endpoint that never answers, with %i worker process(es) (CONTRACT §18)", (processes) => {
  it("delays no other endpoint's deliveries, holds at most its cap of sends, and its waiting deliveries are neither lost nor counted", async () => {
    const workers = await Promise.all(
      Array.from({ length: processes }, () =>
        startRole(api, webhooksRole({ pollIntervalMs: 50, concurrency: CONCURRENCY }), {
          WEBHOOK_TIMEOUT_MS: TIMEOUT_MS,
          WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT: PER_ENDPOINT,
        }),
      ),
    );
    try {
      // Endpoint A never answers (each send ends at WEBHOOK_TIMEOUT_MS), with a backlog of 30
      // deliveries: more than the sends in flight of every process together.
      const slow = await receiver(() => "hang");
      const { partnerId, apiKey, webhookId: slowId } = await registerWebhook(api, slow.url);
      const event = { partnerId, environment: "sandbox" as const, type: "spin.large_win" as const };
      await insertEvents(
        api.database.db,
        Array.from({ length: BACKLOG }, (_, i) => ({ ...event, data: { backlog: i } })),
      );
      await notifyEvents(api.deps.producers);
      await eventually(() => slow.requests.length >= PER_ENDPOINT);

      // B, of the same partner (so every probe of that partner goes to A too), and C, of another.
      const samePartner = await receiver();
      const sameRegistered = await api.request("/api/partner/v1/webhooks", {
        method: "POST",
        apiKey,
        json: { url: samePartner.url, events: ["spin.large_win"] },
      });
      expect(sameRegistered.status).toBe(201);
      const otherPartner = await receiver();
      const other = await registerWebhook(api, otherPartner.url);

      // Probes across A's timeouts: each arrives at B and at C within a bound, whatever A's backlog.
      const sentAt: number[] = [];
      for (let probe = 0; probe < PROBES; probe++) {
        sentAt.push(performance.now());
        await Promise.all([
          emitEvent(api, partnerId, "spin.large_win", { probe }),
          emitEvent(api, other.partnerId, "spin.large_win", { probe }),
        ]);
        await sleep(250);
      }
      for (const healthy of [samePartner, otherPartner]) {
        await eventually(() => healthy.requests.length === PROBES);
        const latencies = healthy.requests.map((request) => request.at - sentAt[bodyOf(request).data.probe]!);
        // Behind A's sends they would wait for its timeouts (4 s each, 30 deliveries and more).
        expect(Math.max(...latencies)).toBeLessThan(TIMEOUT_MS * 0.75);
        expect(healthy.requests.every((request) => request.headers["x-service-attempt"] === "1")).toBe(true);
      }

      // A holds at most its cap of sends, across every process: a send starts only when one ended
      // (a timeout later; the receiver notes a request once it has read it, so a busy loop shortens
      // the gap it sees a little).
      await eventually(() => slow.requests.length >= 3 * PER_ENDPOINT, 4 * TIMEOUT_MS);
      const opened = slow.requests.map((request) => request.at);
      for (let i = 0; i + PER_ENDPOINT < opened.length; i++) {
        expect(opened[i + PER_ENDPOINT]! - opened[i]!).toBeGreaterThanOrEqual(TIMEOUT_MS * 0.75);
      }
      // The line goes in order: a delivery's first attempt never comes before those that joined
      // well ahead of it (the ones woken together may swap).
      const firstBacklogAttempts = slow.requests
        .filter((request) => request.headers["x-service-attempt"] === "1" && bodyOf(request).data.backlog !== undefined)
        .map((request) => bodyOf(request).data.backlog as number);
      for (let i = 0; i + PER_ENDPOINT < firstBacklogAttempts.length; i++) {
        expect(firstBacklogAttempts[i]!).toBeLessThan(firstBacklogAttempts[i + PER_ENDPOINT]!);
      }

      // A comes back: every delivery of it succeeds, none lost, and each counts the sends it got:
      // waiting in line was no attempt.
      slow.setReply(() => 200);
      slow.release(200);
      const rows = await eventually(async () => {
        const list = await api.database.db
          .select()
          .from(webhookDeliveries)
          .where(eq(webhookDeliveries.webhookId, slowId));
        return list.length === BACKLOG + PROBES && list.every((row) => row.status === "succeeded") && list;
      }, 30_000);
      const sends = new Map<string, number>();
      for (const request of slow.requests)
        sends.set(deliveryIdOf(request), (sends.get(deliveryIdOf(request)) ?? 0) + 1);
      expect(rows.map((row) => [row.id, row.attempts])).toEqual(rows.map((row) => [row.id, sends.get(row.id)]));
    } finally {
      await Promise.all(workers.map((worker) => worker.close()));
    }
  }, 90_000);
});
