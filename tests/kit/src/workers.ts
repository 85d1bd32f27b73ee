import { type ChildProcess, spawn } from "node:child_process";
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import type { Environment, EventType } from "@outcomes/core";
import { insertEvent } from "@outcomes/db";
import { notifyEvents } from "@outcomes/queue";
import { createLogger, type Env, type Logger } from "@outcomes/runtime";
import type { RoleStarter } from "@outcomes/worker/context";
import { startWorker } from "@outcomes/worker/start-worker";
import { type WebhooksRoleOptions, webhooksRole } from "@outcomes/worker/webhooks";
import { startTestApi, type TestApi, type TestApiOptions } from "./api.js";
import { fileFixture } from "./file-fixture.js";

const WEBHOOKS_CRASH_WORKER = fileURLToPath(new URL("./webhooks-crash-worker.ts", import.meta.url));

/**
 * The webhooks role in a child process of its own (webhooks-crash-worker.ts) on the test API's
 * database and Redis prefix, for a test to SIGKILL mid-delivery; resolves once it is ready. `env`
 * adds to its environment (e.g. WEBHOOKS_ROLE_OPTIONS).
 */
export async function startWebhooksCrashWorker(api: TestApi, env: Record<string, string> = {}): Promise<ChildProcess> {
  const started = spawn(process.execPath, ["--import", "tsx", WEBHOOKS_CRASH_WORKER], {
    env: {
      ...process.env,
      DATABASE_URL: api.database.url,
      REDIS_URL: api.deps.env.REDIS_URL,
      REDIS_PREFIX: api.deps.env.REDIS_PREFIX,
      LOG_LEVEL: "silent",
      ...env,
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  let output = "";
  started.stdout?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  await eventually(() => output.includes("ready"), 20_000);
  return started;
}

/** One request as the receiver got it: the raw body bytes exactly as sent. */
export interface Received {
  at: number;
  headers: IncomingHttpHeaders;
  rawBody: Buffer;
}

/** What the receiver does with a request: answer with a status, or hold it until `release`. */
export type Reply = number | "hang";

/** Decides the answer to each request the receiver gets (`index`: its place among them). */
export type Replier = (request: Received, index: number) => Reply;

/** A real HTTP server on loopback standing in for a partner's webhook endpoint. */
export async function startReceiver(reply: Replier = () => 200) {
  const requests: Received[] = [];
  const hanging: ServerResponse[] = [];
  let decide: Replier = reply;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const received = { at: performance.now(), headers: req.headers, rawBody: Buffer.concat(chunks) };
      requests.push(received);
      const answer = decide(received, requests.length - 1);
      if (answer === "hang") hanging.push(res);
      else res.writeHead(answer, { "content-type": "text/plain" }).end("thanks");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    url: `http://127.0.0.1:${port}/hook`,
    requests,
    setReply: (next: Replier) => {
      decide = next;
    },
    /** Answers every request left hanging so far with `status`. */
    release: (status: number) => {
      for (const response of hanging.splice(0)) response.writeHead(status).end();
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
export type Receiver = Awaited<ReturnType<typeof startReceiver>>;

/** The receivers a test file starts (`start`, as `startReceiver`), closed together in its `afterAll`. */
export function receiverSet() {
  const started: Receiver[] = [];
  return {
    start: async (reply?: Replier) => {
      const receiver = await startReceiver(reply);
      started.push(receiver);
      return receiver;
    },
    closeAll: async () => {
      await Promise.all(started.splice(0).map((receiver) => receiver.close()));
    },
  };
}

type Truthy<T> = Exclude<T, false | null | undefined | 0 | "">;

/** Polls until `check` returns something truthy, and returns it (or throws after `timeoutMs`). */
export async function eventually<T>(
  check: () => Promise<T> | T,
  timeoutMs = 10_000,
  intervalMs = 25,
): Promise<Truthy<T>> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value) return value as Truthy<T>;
    } catch (error) {
      lastError = error;
    }
    await sleep(intervalMs);
  }
  throw new Error(`condition not met within ${timeoutMs} ms${lastError ? `: ${String(lastError)}` : ""}`);
}

/**
 * Starts a worker role with the production start-up (`startWorker`: its own Postgres pool and Redis
 * connections) on the test API's database and Redis prefix: the two talk only through Postgres and
 * BullMQ, as in production.
 */
export async function startRole(
  api: TestApi,
  role: RoleStarter,
  env: Partial<Env> = {},
  options: { logger?: Logger } = {},
) {
  return startWorker({ ...api.deps.env, ...env }, options.logger ?? createLogger("silent", "worker-test"), {
    "under test": role,
  });
}

/**
 * A webhooks test file's world: the test API (`env`, `apiOptions`), one `webhooks` worker on it
 * (`role` options over a 100 ms outbox poll) and the receivers it starts; `close` stops them all.
 */
export async function startWebhooksWorld(
  env: Record<string, string> = {},
  role: WebhooksRoleOptions = {},
  apiOptions: TestApiOptions = {},
) {
  const api = await startTestApi(env, apiOptions);
  const worker = await startRole(api, webhooksRole({ pollIntervalMs: 100, ...role }));
  const receivers = receiverSet();
  return {
    api,
    worker,
    receiver: receivers.start,
    close: async () => {
      await worker.close();
      await receivers.closeAll();
      await api.close();
    },
  };
}
export type WebhooksWorld = Awaited<ReturnType<typeof startWebhooksWorld>>;

/** The file's webhooks world (as `startWebhooksWorld`), started before its tests and closed after them. */
export function webhooksWorldForFile(...args: Parameters<typeof startWebhooksWorld>): WebhooksWorld {
  return fileFixture(
    () => startWebhooksWorld(...args),
    (world) => world.close(),
  );
}

/** A partner with a webhook registered through the API; the secret is the one shown once. */
export async function registerWebhook(
  api: TestApi,
  url: string,
  events: EventType[] = ["spin.large_win"],
  environment: Environment = "sandbox",
) {
  const { partnerId, apiKey } = await api.createPartner({ environment });
  const response = await api.request("/api/partner/v1/webhooks", { method: "POST", apiKey, json: { url, events } });
  if (response.status !== 201) throw new Error(`registration failed: ${JSON.stringify(response.body)}`);
  return { partnerId, apiKey, webhookId: response.body.id as string, secret: response.body.secret as string };
}

/** Writes an outbox event (as the spin path does) and hints the worker. */
export async function emitEvent(
  api: TestApi,
  partnerId: string,
  type: EventType = "spin.large_win",
  data: Record<string, unknown> = { spinId: "spn_test", payoutUsd: 1500 },
  environment: Environment = "sandbox",
) {
  const envelope = await insertEvent(api.database.db, { partnerId, environment, type, data });
  await notifyEvents(api.deps.producers);
  return envelope;
}

export { deliveryRow } from "./deliveries.js";

export async function deliveriesOf(api: TestApi, apiKey: string, webhookId: string) {
  const response = await api.request(`/api/partner/v1/webhooks/${webhookId}/deliveries`, { apiKey });
  return response.body.deliveries as Array<Record<string, any>>;
}

/** Polls until the webhook's first listed delivery has `status`, and returns it. */
export async function deliveryWhen(
  api: TestApi,
  apiKey: string,
  webhookId: string,
  status: string,
  timeoutMs?: number,
) {
  return eventually(async () => {
    const [delivery] = await deliveriesOf(api, apiKey, webhookId);
    return delivery?.status === status && delivery;
  }, timeoutMs);
}
