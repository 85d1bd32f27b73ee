import { createServer, type Server, type Socket } from "node:net";
import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import { freePort } from "@outcomes/testkit/ports";
import {
  deliveryWhen,
  emitEvent,
  type Receiver,
  registerWebhook,
  startReceiver,
  startRole,
} from "@outcomes/testkit/workers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LOOPBACK_UNREACHABLE } from "./http-client.js";
import { webhooksRole } from "./index.js";

/**
 * Sandbox webhooks may name loopback (CONTRACT §7), so with both environments on one deployment a
 * sandbox partner could scan the host's own ports through `lastError` (issue 38, item 5). Loopback
 * deliveries go only to SANDBOX_LOOPBACK_PORTS, and every failure without an HTTP answer reads the
 * same: a port not allowed, a closed one, a service that hangs up on HTTP or never answers.
 * The webhooks here were registered while every port was allowed (the API of this file sets no
 * list), as on a deployment that sets the variable later; the worker has the list.
 */
let api: TestApi;
let worker: Awaited<ReturnType<typeof startRole>>;
/** An allowed port whose receiver answers 500: the partner's own receiver, whose status it may see. */
let receiver: Receiver;
/** Not allowed: something on the host that answers HTTP (as the API itself would, with 401). */
let service: Receiver;
/** Allowed, and the connection is closed at once (as Postgres or Redis do with an HTTP request). */
let hangUp: Server;
/** Allowed, and nothing is ever answered. */
let silent: Server;
let closedPort: number;
const sockets: Socket[] = [];

async function listen(onConnection: (socket: Socket) => void): Promise<Server> {
  const server = createServer(onConnection);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return server;
}
const portOf = (server: Server) => (server.address() as { port: number }).port;

beforeAll(async () => {
  api = await startTestApi({ WEBHOOK_RETRY_DELAYS_MS: "50,50,50,50", WEBHOOK_TIMEOUT_MS: "500" });
  receiver = await startReceiver(() => 500);
  service = await startReceiver(() => 401);
  hangUp = await listen((socket) => socket.destroy());
  silent = await listen((socket) => {
    sockets.push(socket);
    socket.resume();
  });
  closedPort = await freePort();
  const allowed = [receiver.port, portOf(hangUp), portOf(silent), closedPort];
  worker = await startRole(api, webhooksRole({ pollIntervalMs: 100 }), { SANDBOX_LOOPBACK_PORTS: allowed });
});
afterAll(async () => {
  await worker?.close();
  for (const socket of sockets) socket.destroy();
  await Promise.all([receiver?.close(), service?.close()]);
  await Promise.all([hangUp, silent].map((server) => new Promise((resolve) => server?.close(resolve))));
  await api?.close();
});

/** The delivery of one event to `url`, once all its attempts have failed. */
async function failedDelivery(url: string) {
  const { partnerId, apiKey, webhookId } = await registerWebhook(api, url);
  await emitEvent(api, partnerId);
  return deliveryWhen(api, apiKey, webhookId, "failed", 20_000);
}

describe("sandbox loopback deliveries", () => {
  it("never reach a port SANDBOX_LOOPBACK_PORTS does not list, and say nothing of what listens there", async () => {
    const delivery = await failedDelivery(`http://127.0.0.1:${service.port}/hook`);
    expect(service.requests).toHaveLength(0);
    expect(delivery).toMatchObject({ attempts: 5, lastResponseStatus: null, lastError: LOOPBACK_UNREACHABLE });
  });

  it("read the same on an allowed port that is closed, hangs up, or never answers", async () => {
    for (const port of [closedPort, portOf(hangUp), portOf(silent)]) {
      const delivery = await failedDelivery(`http://127.0.0.1:${port}/hook`);
      expect({ port, lastResponseStatus: delivery.lastResponseStatus, lastError: delivery.lastError }).toEqual({
        port,
        lastResponseStatus: null,
        lastError: LOOPBACK_UNREACHABLE,
      });
    }
  });

  it("still tell the partner's own receiver on an allowed port what it answered", async () => {
    const delivery = await failedDelivery(`http://127.0.0.1:${receiver.port}/hook`);
    expect(receiver.requests.length).toBeGreaterThanOrEqual(5);
    expect(delivery).toMatchObject({ lastResponseStatus: 500, lastError: "Receiver answered HTTP 500" });
  });
});
