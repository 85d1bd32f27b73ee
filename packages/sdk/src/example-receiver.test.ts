import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signatureHeaders } from "./webhook-signature.js";

const EXAMPLE = fileURLToPath(new URL("../examples/webhook-receiver.ts", import.meta.url));
const secret = `whsec_${randomBytes(32).toString("base64")}`;
/** The receiver is mid-rotation: it holds the new secret and the one before it. */
const oldSecret = `whsec_${randomBytes(32).toString("base64")}`;
let receiver: ChildProcess;
let output = "";
let url = "";

beforeAll(async () => {
  receiver = spawn(process.execPath, ["--import", "tsx", EXAMPLE], {
    env: { ...process.env, WEBHOOK_SECRET: `${secret},${oldSecret}`, PORT: "0" },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const port = await new Promise<string>((resolve, reject) => {
    receiver.once("exit", (code) => reject(new Error(`receiver exited with ${code}`)));
    receiver.stdout?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on port (\d+)/.exec(output);
      if (match?.[1]) resolve(match[1]);
    });
  });
  url = `http://127.0.0.1:${port}/`;
}, 20_000);
afterAll(() => {
  receiver.kill("SIGTERM");
});

function deliver(body: string, headers: Record<string, string>) {
  return fetch(url, { method: "POST", body, headers: { "Content-Type": "application/json", ...headers } });
}

function signed(
  body: string,
  deliveryId: string,
  timestamp = Math.floor(Date.now() / 1000),
  key = secret,
): Record<string, string> {
  return {
    ...signatureHeaders({ messageId: JSON.parse(body).id, timestamp, rawBody: body, secret: key }),
    "X-Service-Event": "spin.large_win",
    "X-Service-Delivery-Id": deliveryId,
  };
}

const event = JSON.stringify({
  id: "evt_1",
  sequence: 1,
  type: "spin.large_win",
  createdAt: new Date().toISOString(),
  environment: "sandbox",
  data: { spinId: "spn_1", payoutUsd: 2500 },
});

describe("examples/webhook-receiver.ts", () => {
  it("accepts a correctly signed delivery once and de-duplicates a repeat and a redelivery of its event", async () => {
    expect((await deliver(event, signed(event, "dlv_1"))).status).toBe(204);
    expect((await deliver(event, signed(event, "dlv_1"))).status).toBe(204);
    expect((await deliver(event, signed(event, "dlv_1b"))).status).toBe(204);
    await expect.poll(() => output.match(/duplicate event evt_1 \(webhook\)/g)?.length).toBe(2);
    expect(output.match(/large win #1 \(webhook\)/g)).toHaveLength(1);
  });

  it("refuses a tampered body, a header without sha256= and a stale timestamp", async () => {
    const headers = signed(event, "dlv_2");
    expect((await deliver(event.replace("2500", "25000"), headers)).status).toBe(401);
    const hex = String(headers["X-Service-Signature"]).slice("sha256=".length);
    expect((await deliver(event, { ...headers, "X-Service-Signature": hex })).status).toBe(401);
    const stale = signed(event, "dlv_3", Math.floor(Date.now() / 1000) - 3600);
    expect((await deliver(event, stale)).status).toBe(401);
  });

  it("accepts a delivery signed with either secret of a rotation, and refuses any other", async () => {
    const now = Math.floor(Date.now() / 1000);
    expect((await deliver(event, signed(event, "dlv_4", now, oldSecret))).status).toBe(204);
    const stranger = `whsec_${randomBytes(32).toString("base64")}`;
    expect((await deliver(event, signed(event, "dlv_5", now, stranger))).status).toBe(401);
  });
});
