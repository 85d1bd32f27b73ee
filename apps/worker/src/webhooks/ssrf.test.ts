import { NOT_PUBLIC, newId } from "@outcomes/core";
import { webhooks } from "@outcomes/db";
import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import {
  deliveriesOf,
  deliveryWhen,
  emitEvent,
  eventually,
  type Receiver,
  registerWebhook,
  startReceiver,
  startRole,
} from "@outcomes/testkit/workers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { webhooksRole } from "./index.js";

/** The worker's DNS in this file: a table, so no test depends on real DNS. */
const dns: Record<string, string[]> = {};
const lookups: string[] = [];

let api: TestApi;
let worker: Awaited<ReturnType<typeof startRole>>;
let target: Receiver;

beforeAll(async () => {
  api = await startTestApi({ WEBHOOK_RETRY_DELAYS_MS: "50,50,50,50", WEBHOOK_TIMEOUT_MS: "1000" });
  // Registration sees no DNS answer at all: such names are accepted and vetted at delivery.
  api.deps.resolveHost = async (host) => {
    throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" });
  };
  const resolve = async (host: string) => {
    lookups.push(host);
    const addresses = dns[host];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" });
    return addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };
  worker = await startRole(api, webhooksRole({ pollIntervalMs: 100, resolve }));
  target = await startReceiver();
});
afterAll(async () => {
  await worker?.close();
  await target?.close();
  await api?.close();
});

describe("SSRF protection at delivery", () => {
  it("refuses a name that resolves to a private address, without connecting", async () => {
    dns["private.partner.test"] = ["10.0.0.8"];
    const { partnerId, apiKey, webhookId } = await registerWebhook(api, "https://private.partner.test/hook");
    await emitEvent(api, partnerId);
    const delivery = await deliveryWhen(api, apiKey, webhookId, "failed");
    expect(delivery).toMatchObject({ attempts: 5, lastResponseStatus: null });
    // One reason whatever the address: lastError must not map internal names (issue 38, item 4).
    expect(delivery.lastError).toBe(`Refused: URL ${NOT_PUBLIC}`);
    expect(lookups).toContain("private.partner.test");
  });

  it("refuses a stored URL whose IP literal is private (rules are checked again on every attempt)", async () => {
    const { partnerId, apiKey } = await api.createPartner({ environment: "production" });
    const webhookId = newId("whk");
    // Written directly: registration would refuse it, as if the row predated the rule.
    await api.database.db.insert(webhooks).values({
      id: webhookId,
      partnerId,
      environment: "production",
      url: `https://127.0.0.1:${target.port}/hook`,
      events: ["spin.large_win"],
      secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
    });
    const before = target.requests.length;
    await emitEvent(api, partnerId, "spin.large_win", { spinId: "spn_x" }, "production");
    const delivery = await deliveryWhen(api, apiKey, webhookId, "failed");
    expect(delivery.lastError).toBe(`Refused: URL ${NOT_PUBLIC}`);
    expect(target.requests).toHaveLength(before);
  });

  it("connects a sandbox localhost URL to the address its own lookup vetted", async () => {
    dns.localhost = ["127.0.0.1"];
    const { partnerId, apiKey, webhookId } = await registerWebhook(api, `http://localhost:${target.port}/hook`);
    const before = target.requests.length;
    await emitEvent(api, partnerId);
    await eventually(async () => (await deliveriesOf(api, apiKey, webhookId))[0]?.status === "succeeded");
    expect(target.requests).toHaveLength(before + 1);
    expect(lookups).toContain("localhost");
  });

  it("lets sandbox localhost reach loopback only, not a private address it resolves to", async () => {
    dns.localhost = ["169.254.169.254"];
    const { partnerId, apiKey, webhookId } = await registerWebhook(api, "http://localhost:9/hook");
    await emitEvent(api, partnerId);
    const delivery = await deliveryWhen(api, apiKey, webhookId, "failed");
    expect(delivery.lastError).toBe(`Refused: URL ${NOT_PUBLIC}`);
  });
});
