import { hashApiKey, SAMPLE_PAR_SHEET } from "@outcomes/core";
import { createLogger } from "@outcomes/runtime";
import { startTestApi, TEST_ADMIN_TOKEN, type TestApi } from "@outcomes/testkit/api";
import { eventually, type Receiver, startReceiver, startRole } from "@outcomes/testkit/workers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startBlocksRole } from "../../apps/worker/src/blocks/index.js";
import { startSettlementsRole } from "../../apps/worker/src/settlements/index.js";
import { webhooksRole } from "../../apps/worker/src/webhooks/index.js";
import { testResolver, utcDay, WORLD_ENV } from "./world.js";

/**
 * Keys and webhook secrets never reach a log line (issue 8, item 6; CONTRACT §2): a full run (the
 * API, and the blocks, webhooks and settlements roles, all at trace level into captured streams)
 * issues and rotates keys, generates outcomes, spins, registers a webhook, delivers (one attempt
 * failing on purpose), settles, and fails requests in the ways that log most, and then every line
 * is searched for every secret and the forms it could be logged in.
 */
const apiLines: string[] = [];
const workerLines: string[] = [];
let api: TestApi;
let receiver: Receiver;
const roles: Array<{ close: () => Promise<void> }> = [];

beforeAll(async () => {
  const capture = (lines: string[]) => ({ write: (line: string) => lines.push(line) });
  api = await startTestApi(
    { ...WORLD_ENV, LOG_LEVEL: "trace", WEBHOOK_RETRY_DELAYS_MS: "100,100,100,100" },
    { logger: createLogger("trace", "api", capture(apiLines)) },
  );
  api.deps.resolveHost = testResolver;
  const logger = createLogger("trace", "worker", capture(workerLines));
  for (const role of [startBlocksRole, webhooksRole({ pollIntervalMs: 100 }), startSettlementsRole]) {
    roles.push(await startRole(api, role, {}, { logger }));
  }
  // The first delivery fails, so the worker logs a failed attempt.
  receiver = await startReceiver((_, index) => (index === 0 ? 500 : 200));
});
afterAll(async () => {
  for (const role of roles) await role.close();
  await receiver?.close();
  await api?.close();
});

const admin = (path: string, json?: unknown) =>
  api.request(`/api/admin/v1${path}`, { method: json === undefined ? "GET" : "POST", admin: true, json });
const partner = (apiKey: string, path: string, init: Parameters<TestApi["request"]>[1] = {}) =>
  api.request(`/api/partner/v1${path}`, { ...init, apiKey });

/** The flow; returns every secret it saw. */
async function fullRun(): Promise<string[]> {
  const created = (await admin("/partners", { slug: "log-secrets", name: "Log secrets" })).body;
  const issued = (await admin(`/partners/${created.id}/api-keys`, { environment: "sandbox" })).body;
  const rotated = (await admin(`/partners/${created.id}/api-keys/${issued.id}/rotate`, { overlapHours: 1 })).body;
  await admin(`/partners/${created.id}/api-keys`);
  const key: string = rotated.key;

  const sheet = (await partner(key, "/par-sheets", { method: "POST", json: SAMPLE_PAR_SHEET })).body;
  const game = await partner(key, "/games", {
    method: "POST",
    json: { parSheetId: sheet.id, name: "Logged game", maxWagerUsd: 10, largeWinThresholdUsd: 0.000001 },
  });
  expect(game.status).toBe(201);
  const hook = await partner(key, "/webhooks", {
    method: "POST",
    json: { url: receiver.url, events: ["spin.large_win", "settlement.report_ready"] },
  });
  expect(hook.status).toBe(201);

  // The blocks role fills the reserve the registration asked for; spins wait for it.
  const spin = (n: number) =>
    partner(key, "/spins", {
      method: "POST",
      json: { gameId: game.body.gameConfigId, playerId: "logged-player", wagerUsd: 1 },
      headers: n % 2 === 0 ? { "Idempotency-Key": `spin-${n}` } : {},
    });
  await eventually(async () => (await spin(0)).status === 200, 15_000, 50);
  for (let n = 1; n < 25; n++) expect((await spin(n)).status).toBe(200);
  await partner(key, "/players/logged-player");
  await partner(key, "/players/logged-player/spins");
  // Replay links: the token in a page's path is its permission.
  const spun = (await spin(25)).body;
  const link = (await partner(key, `/spins/${spun.spinId}/replay-link`, { method: "POST" })).body;
  const listed = (await partner(key, "/players/logged-player/spins?limit=1&replayLinks=true")).body;
  const tokens = [link.url, listed.spins[0].replayUrl].map((url: string) => new URL(url).pathname.slice(8));
  for (const token of tokens) {
    expect((await api.request(`/replay/${token}`)).status).toBe(200);
    expect((await api.request(`/replay/${token}.json`)).status).toBe(200);
  }
  await admin("/jobs/settlements/run", {});
  await admin(`/partners/${created.id}/settlements`, { reportDate: utcDay(), environment: "sandbox" });
  await eventually(() => receiver.requests.length >= 3, 15_000);

  // Refusals log their request lines too: a mistyped, an unknown-environment and a revoked key,
  // a key pasted into a path, a webhook URL refused, and operator calls with wrong tokens.
  await partner(`${key.slice(0, -1)}0`, "/games");
  await partner(key.replace("ks_sandbox_", "kp_prod_"), "/games");
  await partner(key, `/players/${key}`);
  await partner(key, "/webhooks", { method: "POST", json: { url: `https://user:${key}@example.com`, events: [] } });
  await api.request("/api/admin/v1/partners", { headers: { Authorization: `Bearer ${TEST_ADMIN_TOKEN}x` } });
  await admin(`/partners/${created.id}/api-keys/${issued.id}/revoke`, {});
  await partner(issued.key, "/games");

  return [issued.key, rotated.key, hook.body.secret, TEST_ADMIN_TOKEN, ...tokens];
}

/** A secret as it could leak: whole, without its recognisable prefix, hashed, or base64/hex of it. */
function forms(secret: string): string[] {
  const bare = secret.replace(/^(ks_sandbox_|kp_prod_|whsec_)/, "");
  return [
    secret,
    bare,
    hashApiKey(secret),
    Buffer.from(secret).toString("base64"),
    Buffer.from(secret).toString("hex"),
    encodeURIComponent(secret),
  ];
}

describe("secrets in logs", () => {
  it("no key, key hash, webhook secret, operator token or replay token appears in any API or worker log line", async () => {
    const secrets = await fullRun();
    const lines = [...apiLines, ...workerLines];
    // The run logged plenty, the worker included (its failed attempt, its fills, its reports).
    expect(apiLines.length).toBeGreaterThan(40);
    expect(workerLines.some((line) => line.includes("webhook attempt failed"))).toBe(true);
    expect(workerLines.some((line) => line.includes("reserve filled"))).toBe(true);
    for (const secret of secrets) {
      for (const form of forms(secret)) {
        const leaking = lines.filter((line) => line.includes(form));
        expect(leaking, `a log line carries ${form.slice(0, 12)}…`).toEqual([]);
      }
    }
  });
});
