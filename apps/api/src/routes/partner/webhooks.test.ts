import { webhookDeliveries } from "@outcomes/db";
import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import { webhookWithDeliveries as fixture } from "@outcomes/testkit/deliveries";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
  // No DNS in tests: names resolve through this table only.
  const table: Record<string, string[]> = {
    "hooks.partner.test": ["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"],
    "internal.partner.test": ["93.184.216.34", "10.20.30.40"],
    "metadata.partner.test": ["169.254.169.254"],
    "v6-private.partner.test": ["fd12::1"],
  };
  api.deps.resolveHost = async (host) => {
    const addresses = table[host];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: "ENOTFOUND" });
    return addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  };
});
afterAll(async () => {
  await api?.close();
});

const WEBHOOKS = "/api/partner/v1/webhooks";
const register = (apiKey: string, json: unknown) => api.request(WEBHOOKS, { method: "POST", apiKey, json });

describe("POST /webhooks", () => {
  it("registers a webhook and shows its secret once", async () => {
    const { apiKey } = await api.createPartner();
    const created = await register(apiKey, { url: "https://hooks.partner.test/ks", events: ["spin.large_win"] });
    expect(created.status).toBe(201);
    expect(Object.keys(created.body).sort()).toEqual([
      "createdAt",
      "events",
      "id",
      "isActive",
      "rateLimitPerSecond",
      "secret",
      "url",
    ]);
    expect(created.body).toMatchObject({
      url: "https://hooks.partner.test/ks",
      events: ["spin.large_win"],
      isActive: true,
    });
    expect(created.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(created.body.secret.slice(6), "base64")).toHaveLength(32);

    const listed = await api.request(WEBHOOKS, { apiKey });
    expect(listed.body.webhooks[0]).not.toHaveProperty("secret");
    expect(JSON.stringify(listed.body)).not.toContain(created.body.secret);
  });

  it("accepts the sandbox localhost forms over http, and refuses them in production", async () => {
    const sandbox = await api.createPartner();
    const production = await api.createPartner({ environment: "production" });
    for (const url of ["http://localhost:3000/hook", "http://127.0.0.1:8080/x", "http://[::1]:9000/"]) {
      expect((await register(sandbox.apiKey, { url, events: ["block.low_reserve"] })).status).toBe(201);
      const refused = await register(production.apiKey, { url, events: ["block.low_reserve"] });
      expect([refused.status, refused.body.errorCode]).toEqual([400, "KS-4106"]);
    }
  });

  it.each([
    ["plain http", "http://hooks.partner.test/ks"],
    ["another scheme", "ftp://hooks.partner.test/ks"],
    ["credentials", "https://user:secret@hooks.partner.test/ks"],
    ["CRLF", "https://hooks.partner.test/ks\r\nX-Evil: 1"],
    ["not a URL", "hooks.partner.test/ks"],
    ["10.x", "https://10.0.0.8/ks"],
    ["127.x", "https://127.0.0.1/ks"],
    ["cloud metadata", "https://169.254.169.254/latest/meta-data"],
    ["mapped IPv6", "https://[::ffff:192.168.1.1]/ks"],
    ["localhost name", "https://localhost/ks"],
    ["a name with a private address", "https://internal.partner.test/ks"],
    ["a name resolving to link-local", "https://metadata.partner.test/ks"],
    ["a name resolving to unique-local IPv6", "https://v6-private.partner.test/ks"],
  ])("refuses %s in production with KS-4106, storing nothing", async (_case, url) => {
    const { apiKey } = await api.createPartner({ environment: "production" });
    const refused = await register(apiKey, { url, events: ["spin.large_win"] });
    expect([refused.status, refused.body.errorCode]).toEqual([400, "KS-4106"]);
    expect(refused.body.details[0].path).toBe("url");
    expect((await api.request(WEBHOOKS, { apiKey })).body.total).toBe(0);
  });

  it("accepts a production name that resolves publicly or not yet at all (vetted again at delivery)", async () => {
    const { apiKey } = await api.createPartner({ environment: "production" });
    expect((await register(apiKey, { url: "https://hooks.partner.test/", events: ["spin.large_win"] })).status).toBe(
      201,
    );
    expect((await register(apiKey, { url: "https://not-yet.partner.test/", events: ["spin.large_win"] })).status).toBe(
      201,
    );
  });

  it.each([
    [{ url: "https://hooks.partner.test/", events: [] }, "KS-4107"],
    [{ url: "https://hooks.partner.test/", events: ["spin.big_win"] }, "KS-4107"],
    [{ url: "https://hooks.partner.test/", events: ["spin.large_win", "spin.large_win"] }, "KS-4107"],
    [{ url: "https://hooks.partner.test/", events: [42] }, "KS-4107"],
    [{ url: "https://hooks.partner.test/" }, "KS-4102"],
    [{ events: ["spin.large_win"] }, "KS-4102"],
    [{ url: "", events: ["spin.large_win"] }, "KS-4102"],
    [{ url: null, events: ["spin.large_win"] }, "KS-4102"],
    [{ url: 7, events: ["spin.large_win"] }, "KS-4106"],
    [{ url: "https://hooks.partner.test/", events: ["spin.large_win"], extra: true }, "KS-4101"],
  ])("answers %j with %s", async (body, code) => {
    const { apiKey } = await api.createPartner();
    const response = await register(apiKey, body);
    expect([response.status, response.body.errorCode]).toEqual([400, code]);
    expect((await api.request(WEBHOOKS, { apiKey })).body.total).toBe(0);
  });
});

describe("GET, DELETE and ownership", () => {
  it("lists newest first with paging, keeping deleted webhooks inactive with deletedAt", async () => {
    const { apiKey } = await api.createPartner();
    const ids: string[] = [];
    for (const path of ["a", "b", "c"]) {
      ids.push(
        (await register(apiKey, { url: `https://hooks.partner.test/${path}`, events: ["api_key.expiring"] })).body.id,
      );
    }
    const deleted = await api.request(`${WEBHOOKS}/${ids[1]}`, { method: "DELETE", apiKey });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toMatchObject({ id: ids[1], isActive: false });
    expect(deleted.body).not.toHaveProperty("secret");
    const again = await api.request(`${WEBHOOKS}/${ids[1]}`, { method: "DELETE", apiKey });
    expect(again.status).toBe(200);
    expect(again.body.deletedAt).toBe(deleted.body.deletedAt);

    const page1 = await api.request(`${WEBHOOKS}?page=1&limit=2`, { apiKey });
    expect(page1.body).toMatchObject({ page: 1, limit: 2, total: 3 });
    expect(page1.body.webhooks.map((webhook: { id: string }) => webhook.id)).toEqual([ids[2], ids[1]]);
    expect(page1.body.webhooks[0]).toMatchObject({ isActive: true, deletedAt: null });
    expect(page1.body.webhooks[1]).toMatchObject({ isActive: false, deletedAt: deleted.body.deletedAt });
    const page2 = await api.request(`${WEBHOOKS}?page=2&limit=2`, { apiKey });
    expect(page2.body.webhooks.map((webhook: { id: string }) => webhook.id)).toEqual([ids[0]]);
    expect((await api.request(`${WEBHOOKS}?limit=101`, { apiKey })).body.errorCode).toBe("KS-4101");
  });

  it("answers KS-4206 for unknown and other-environment webhooks, KS-4207 for another partner's", async () => {
    const owner = await api.createPartner();
    const { id } = (await register(owner.apiKey, { url: "https://hooks.partner.test/", events: ["spin.large_win"] }))
      .body;
    const stranger = await api.createPartner();
    const production = await api.createPartner({ environment: "production" });
    for (const path of [`${WEBHOOKS}/${id}/deliveries`, `${WEBHOOKS}/${id}`]) {
      const method = path.endsWith("deliveries") ? "GET" : "DELETE";
      const foreign = await api.request(path, { method, apiKey: stranger.apiKey });
      expect([foreign.status, foreign.body.errorCode]).toEqual([403, "KS-4207"]);
      const otherEnvironment = await api.request(path, { method, apiKey: production.apiKey });
      expect([otherEnvironment.status, otherEnvironment.body.errorCode]).toEqual([404, "KS-4206"]);
    }
    const unknown = await api.request(`${WEBHOOKS}/whk_nope`, { method: "DELETE", apiKey: owner.apiKey });
    expect([unknown.status, unknown.body.errorCode]).toEqual([404, "KS-4206"]);
    // Nothing was deleted by the refused calls.
    expect((await api.request(WEBHOOKS, { apiKey: owner.apiKey })).body.webhooks[0].isActive).toBe(true);
  });
});

describe("deliveries and redeliver", () => {
  const webhookWithDeliveries = (count: number) => fixture(api, Array(count).fill("pending"));

  it("lists deliveries newest first with the contract's fields and paging", async () => {
    const { apiKey, webhookId, deliveryIds } = await webhookWithDeliveries(3);
    const page = await api.request(`${WEBHOOKS}/${webhookId}/deliveries?page=1&limit=2`, { apiKey });
    expect(page.status).toBe(200);
    expect(page.body).toMatchObject({ page: 1, limit: 2, total: 3 });
    expect(page.body.deliveries.map((delivery: { id: string }) => delivery.id)).toEqual([
      deliveryIds[2],
      deliveryIds[1],
    ]);
    expect(Object.keys(page.body.deliveries[0]).sort()).toEqual(
      [
        "attempts",
        "completedAt",
        "createdAt",
        "event",
        "id",
        "lastError",
        "lastResponseStatus",
        "maxAttempts",
        "nextAttemptAt",
        "status",
      ].sort(),
    );
    expect(page.body.deliveries[0]).toMatchObject({
      event: "block.low_reserve",
      status: "pending",
      attempts: 0,
      maxAttempts: 5,
    });
    expect((await api.request(`${WEBHOOKS}/${webhookId}/deliveries?page=0`, { apiKey })).body.errorCode).toBe(
      "KS-4101",
    );
  });

  it("redelivers as a new queued delivery of the same body, and refuses unknown deliveries", async () => {
    const { apiKey, webhookId, deliveryIds } = await webhookWithDeliveries(1);
    const response = await api.request(`${WEBHOOKS}/${webhookId}/deliveries/${deliveryIds[0]}/redeliver`, {
      method: "POST",
      apiKey,
    });
    expect(response.status).toBe(202);
    expect(response.body).toMatchObject({ status: "pending", attempts: 0, maxAttempts: 5, event: "block.low_reserve" });
    const [original] = await api.database.db
      .select()
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.id, deliveryIds[0]!));
    const [copy] = await api.database.db
      .select()
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.id, response.body.id));
    expect(copy).toMatchObject({ eventId: original!.eventId, body: original!.body, redeliveryOf: original!.id });
    const job = await api.deps.producers.queues.webhooks.getJob(response.body.id);
    expect(job?.name).toBe("webhook.deliver");
    expect(job?.opts.attempts).toBe(5);

    const unknown = await api.request(`${WEBHOOKS}/${webhookId}/deliveries/dlv_nope/redeliver`, {
      method: "POST",
      apiKey,
    });
    expect([unknown.status, unknown.body.errorCode]).toEqual([404, "KS-4215"]);

    await api.request(`${WEBHOOKS}/${webhookId}`, { method: "DELETE", apiKey });
    const afterDelete = await api.request(`${WEBHOOKS}/${webhookId}/deliveries/${deliveryIds[0]}/redeliver`, {
      method: "POST",
      apiKey,
    });
    expect([afterDelete.status, afterDelete.body.errorCode]).toEqual([400, "KS-4101"]);
    // Deleting closed the open deliveries: no retry will come.
    const listed = await api.request(`${WEBHOOKS}/${webhookId}/deliveries`, { apiKey });
    expect(listed.body.deliveries.every((delivery: { status: string }) => delivery.status === "failed")).toBe(true);
  });
});
