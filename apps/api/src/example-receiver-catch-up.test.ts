import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type EventEnvelope, serializeEnvelope } from "@outcomes/core";
import { insertEvents } from "@outcomes/db";
import { signatureHeaders } from "@outcomes/sdk";
import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const EXAMPLE = fileURLToPath(new URL("../../../packages/sdk/examples/webhook-receiver.ts", import.meta.url));
const secret = `whsec_${randomBytes(32).toString("base64")}`;

let api: TestApi;
let stateDir: string;
beforeAll(async () => {
  api = await startTestApi();
  stateDir = await mkdtemp(join(tmpdir(), "receiver-"));
});
afterAll(async () => {
  await api.close();
  await rm(stateDir, { recursive: true, force: true });
});

interface Receiver {
  url: string;
  output: () => string;
  stop: () => Promise<void>;
}

/** Runs the example as a partner would, with its API key, against the running service. */
async function startReceiver(apiKey: string): Promise<Receiver> {
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", EXAMPLE], {
    env: {
      ...process.env,
      WEBHOOK_SECRET: secret,
      PORT: "0",
      OUTCOMES_API_KEY: apiKey,
      OUTCOMES_BASE_URL: api.baseUrl,
      STATE_FILE: join(stateDir, "state.json"),
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  let output = "";
  const port = await new Promise<string>((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`receiver exited with ${code}`)));
    child.stdout?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on port (\d+)/.exec(output);
      if (match?.[1]) resolve(match[1]);
    });
  });
  return {
    url: `http://127.0.0.1:${port}/`,
    output: () => output,
    stop: async () => {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    },
  };
}

function push(receiver: Receiver, event: EventEnvelope<unknown>) {
  const body = serializeEnvelope(event);
  const deliveryId = `dlv_${randomBytes(4).toString("hex")}`;
  const timestamp = Math.floor(Date.now() / 1000);
  return fetch(receiver.url, {
    method: "POST",
    body,
    headers: {
      "Content-Type": "application/json",
      "X-Service-Delivery-Id": deliveryId,
      ...signatureHeaders({ messageId: event.id, timestamp, rawBody: body, secret }),
    },
  });
}

describe("examples/webhook-receiver.ts catching up from the event log", () => {
  it("handles every event once across webhooks, downtime and restarts", async () => {
    const { partnerId, apiKey } = await api.createPartner();
    const record = (count: number) =>
      insertEvents(
        api.database.db,
        Array.from({ length: count }, (_, i) => ({
          partnerId,
          environment: "sandbox" as const,
          type: "spin.large_win" as const,
          data: { payoutUsd: 1000 + i },
        })),
      );
    // Three events while the receiver was not yet running.
    const missed = await record(3);

    const first = await startReceiver(apiKey);
    await expect.poll(first.output).toContain("caught up: 3 events read, cursor at 3");
    // A late webhook of an event already read from the log is a duplicate; a new one is handled.
    expect((await push(first, missed[1]!)).status).toBe(204);
    const [pushed] = await record(1);
    expect((await push(first, pushed!)).status).toBe(204);
    await expect.poll(first.output).toContain("large win #4 (webhook)");
    expect(first.output()).toContain(`duplicate event ${missed[1]!.id} (webhook)`);
    await first.stop();

    // Down: these two are pushed to nobody (their deliveries would fail).
    await record(2);
    const second = await startReceiver(apiKey);
    await expect.poll(second.output).toContain("caught up: 3 events read, cursor at 6");
    await second.stop();

    const handled = (first.output() + second.output()).match(/large win #\d+ \([a-z ]+\)/g);
    expect(handled).toEqual([
      "large win #1 (event log)",
      "large win #2 (event log)",
      "large win #3 (event log)",
      "large win #4 (webhook)",
      "large win #5 (event log)",
      "large win #6 (event log)",
    ]);
    expect(second.output()).toContain(`duplicate event ${pushed!.id} (event log)`);
  });
});
