import { type ChildProcess, spawn } from "node:child_process";
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import { deliveryRow, emitEvent, eventually, registerWebhook, startRole } from "@outcomes/testkit/workers";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { webhooksRole } from "./webhooks/index.js";

const MAIN = fileURLToPath(new URL("./main.ts", import.meta.url));

/** A database and Redis prefix per test: the job one test leaves active never reaches the other. */
let api: TestApi;
beforeEach(async () => {
  api = await startTestApi();
});
afterEach(async () => {
  await api.close();
});

/** A webhook endpoint that holds every request until the test answers it. */
async function holdingReceiver() {
  const held: Array<{ headers: IncomingHttpHeaders; response: ServerResponse }> = [];
  const server = createServer((request, response) => {
    request.resume();
    request.on("end", () => held.push({ headers: request.headers, response }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    held,
    answer: (index: number, status = 200) => held[index]?.response.writeHead(status).end(),
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A worker process on the test API's database and Redis prefix; resolves once `ready` is printed. */
async function startProcess(args: string[], ready: RegExp) {
  const child = spawn(process.execPath, ["--import", "tsx", ...args], {
    env: {
      ...process.env,
      DATABASE_URL: api.database.url,
      REDIS_URL: api.deps.env.REDIS_URL,
      REDIS_PREFIX: api.deps.env.REDIS_PREFIX,
      WORKER_METRICS_PORT: "0",
      LOG_LEVEL: "info",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      if (ready.test(output)) resolve();
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    void exited.then((code) => reject(new Error(`exited with ${code} before ready:\n${output}`)));
  });
  return { child: child as ChildProcess, exited, output: () => output };
}

describe("worker shutdown mid-job", () => {
  it("on SIGTERM finishes the running delivery, takes no new work, then exits 0", async () => {
    const receiver = await holdingReceiver();
    try {
      const { partnerId, webhookId } = await registerWebhook(api, receiver.url);
      const worker = await startProcess([MAIN, "--role", "webhooks"], /"role started"/);
      await emitEvent(api, partnerId);
      await eventually(() => receiver.held.length === 1);

      worker.child.kill("SIGTERM");
      await eventually(() => worker.output().includes('"shutting down"'));
      // Work that arrives while it drains is left for the next worker.
      await emitEvent(api, partnerId);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(worker.child.exitCode).toBeNull();
      receiver.answer(0);

      expect(await worker.exited).toBe(0);
      expect(receiver.held).toHaveLength(1);
      const deliveryId = String(receiver.held[0]?.headers["x-service-delivery-id"]);
      expect(await deliveryRow(api, deliveryId)).toMatchObject({ status: "succeeded", attempts: 1, webhookId });

      const next = await startRole(api, webhooksRole({ pollIntervalMs: 100 }));
      try {
        await eventually(() => receiver.held.length === 2);
        receiver.answer(1);
        const second = String(receiver.held[1]?.headers["x-service-delivery-id"]);
        expect(second).not.toBe(deliveryId);
        await eventually(async () => (await deliveryRow(api, second))?.status === "succeeded");
      } finally {
        await next.close();
      }
    } finally {
      await receiver.close();
    }
  });

  it("exits at once on a second signal, leaving the unfinished delivery to be taken over", async () => {
    const receiver = await holdingReceiver();
    try {
      const { partnerId } = await registerWebhook(api, receiver.url);
      const worker = await startProcess([MAIN, "--role", "webhooks"], /"role started"/);
      await emitEvent(api, partnerId);
      await eventually(() => receiver.held.length === 1);
      worker.child.kill("SIGTERM");
      await eventually(() => worker.output().includes('"shutting down"'));
      worker.child.kill("SIGTERM");
      expect(await worker.exited).toBe(1);
      expect(worker.output()).toContain('"second signal, exiting now"');
      // Never answered, never completed: its batch's job is still active, for the stalled check to
      // hand over (a killed worker's take-over is tested in webhooks/crash.test.ts).
      const deliveryId = String(receiver.held[0]?.headers["x-service-delivery-id"]);
      const row = await deliveryRow(api, deliveryId);
      expect(row).toMatchObject({ status: "pending", attempts: 1 });
      expect(await api.deps.producers.queues["webhook-batches"].getJobState(row!.batchId!)).toBe("active");
    } finally {
      await receiver.close();
    }
  });
});
