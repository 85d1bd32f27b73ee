import type { ChildProcess } from "node:child_process";
import { once } from "node:events";
import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import {
  deliveryRow,
  emitEvent,
  eventually,
  type Receiver,
  registerWebhook,
  startReceiver,
  startRole,
  startWebhooksCrashWorker,
} from "@outcomes/testkit/workers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { webhooksRole } from "./index.js";

// Long enough that the first worker is still waiting on the receiver when it is killed.
const TIMEOUT_MS = "20000";

let api: TestApi;
let target: Receiver;
let child: ChildProcess | undefined;

beforeAll(async () => {
  api = await startTestApi({ WEBHOOK_TIMEOUT_MS: TIMEOUT_MS, WEBHOOK_RETRY_DELAYS_MS: "50,50,50,50" });
  target = await startReceiver((_request, index) => (index === 0 ? "hang" : 200));
});
afterAll(async () => {
  child?.kill("SIGKILL");
  await target?.close();
  await api?.close();
});

describe("a worker killed mid-delivery", () => {
  it("leaves the delivery to another worker, which retries it with the same delivery id", async () => {
    const { partnerId } = await registerWebhook(api, target.url);
    child = await startWebhooksCrashWorker(api, { WEBHOOK_TIMEOUT_MS: TIMEOUT_MS });
    await emitEvent(api, partnerId);

    await eventually(() => target.requests.length === 1, 10_000);
    const deliveryId = String(target.requests[0]!.headers["x-service-delivery-id"]);
    child.kill("SIGKILL");
    await once(child, "exit");
    expect(await deliveryRow(api, deliveryId)).toMatchObject({ status: "pending", attempts: 1 });

    const survivor = await startRole(
      api,
      webhooksRole({ pollIntervalMs: 100, lockDurationMs: 1000, stalledIntervalMs: 500 }),
    );
    try {
      const row = await eventually(async () => {
        const current = await deliveryRow(api, deliveryId);
        return current?.status === "succeeded" && current;
      }, 15_000);
      expect(row).toMatchObject({ attempts: 2, lastResponseStatus: 200 });
      expect(target.requests.map((request) => request.headers["x-service-delivery-id"])).toEqual([
        deliveryId,
        deliveryId,
      ]);
      expect(target.requests.map((request) => request.headers["x-service-attempt"])).toEqual(["1", "2"]);
      expect(target.requests[1]!.rawBody.equals(target.requests[0]!.rawBody)).toBe(true);
    } finally {
      await survivor.close();
    }
  });
});
