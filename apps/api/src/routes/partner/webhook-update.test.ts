import { testApiForFile } from "@outcomes/testkit/file-fixture";
import { describe, expect, it } from "vitest";

/** `rateLimitPerSecond` at registration and `PATCH /webhooks/{id}`, and `enable` on what it cannot turn on. */
const api = testApiForFile();

const WEBHOOKS = "/api/partner/v1/webhooks";
const URL = "http://127.0.0.1:9/hook";

async function webhook(rateLimitPerSecond?: number) {
  const { apiKey, partnerId } = await api.createPartner();
  const created = await api.request(WEBHOOKS, {
    method: "POST",
    apiKey,
    json: { url: URL, events: ["spin.large_win"], ...(rateLimitPerSecond ? { rateLimitPerSecond } : {}) },
  });
  expect(created.status).toBe(201);
  return { apiKey, partnerId, id: created.body.id as string, created: created.body };
}

const patch = (apiKey: string, id: string, json: unknown) =>
  api.request(`${WEBHOOKS}/${id}`, { method: "PATCH", apiKey, json });

describe("rateLimitPerSecond", () => {
  it("is taken at registration (1..1000), shown in the list, changed and cleared by PATCH", async () => {
    const { apiKey, id, created } = await webhook(5);
    expect(created.rateLimitPerSecond).toBe(5);
    const unpaced = await webhook();
    expect(unpaced.created.rateLimitPerSecond).toBeNull();

    const changed = await patch(apiKey, id, { rateLimitPerSecond: 1000 });
    expect([changed.status, changed.body.rateLimitPerSecond]).toEqual([200, 1000]);
    const [listed] = (await api.request(WEBHOOKS, { apiKey })).body.webhooks;
    expect(listed).toEqual(changed.body);
    expect(listed).not.toHaveProperty("secret");
    // Nothing sent: nothing changes.
    expect((await patch(apiKey, id, {})).body).toEqual(changed.body);
    const cleared = await patch(apiKey, id, { rateLimitPerSecond: null });
    expect([cleared.status, cleared.body.rateLimitPerSecond]).toEqual([200, null]);
  });

  it("refuses anything but an integer 1..1000 (KS-4101) and changes nothing", async () => {
    const { apiKey, id } = await webhook(7);
    for (const bad of [0, 1001, 2.5, -1, "5", true]) {
      const refused = await patch(apiKey, id, { rateLimitPerSecond: bad });
      expect([bad, refused.status, refused.body.errorCode]).toEqual([bad, 400, "KS-4101"]);
      const registered = await api.request(WEBHOOKS, {
        method: "POST",
        apiKey,
        json: { url: URL, events: ["spin.large_win"], rateLimitPerSecond: bad },
      });
      expect([bad, registered.status, registered.body.errorCode]).toEqual([bad, 400, "KS-4101"]);
    }
    for (const json of [{ url: "https://elsewhere.example/" }, { isActive: false }]) {
      expect((await patch(apiKey, id, json)).body.errorCode).toBe("KS-4101");
    }
    const [listed] = (await api.request(WEBHOOKS, { apiKey })).body.webhooks;
    expect(listed).toMatchObject({ id, rateLimitPerSecond: 7, url: URL });
  });

  it("answers another partner's webhook 403 KS-4207, an unknown or another environment's 404 KS-4206", async () => {
    const { id } = await webhook();
    const stranger = await api.createPartner();
    const production = await api.createPartner({ environment: "production" });
    const other = await patch(stranger.apiKey, id, { rateLimitPerSecond: 3 });
    expect([other.status, other.body.errorCode]).toEqual([403, "KS-4207"]);
    for (const [apiKey, target] of [
      [stranger.apiKey, "whk_0000000000000000000000"],
      [production.apiKey, id],
    ] as const) {
      const missing = await patch(apiKey, target, { rateLimitPerSecond: 3 });
      expect([missing.status, missing.body.errorCode]).toEqual([404, "KS-4206"]);
      const enable = await api.request(`${WEBHOOKS}/${target}/enable`, { method: "POST", apiKey });
      expect([enable.status, enable.body.errorCode]).toEqual([404, "KS-4206"]);
    }
  });
});

describe("a deleted webhook", () => {
  it("cannot be updated or enabled (404 KS-4206); an enabled one is answered as it is", async () => {
    const { apiKey, id, created } = await webhook();
    const enabled = await api.request(`${WEBHOOKS}/${id}/enable`, { method: "POST", apiKey });
    expect(enabled.status).toBe(200);
    const { secret: _, ...shown } = created;
    expect(enabled.body).toEqual({ ...shown, deletedAt: null, disabledAt: null, disabledReason: null });
    await api.request(`${WEBHOOKS}/${id}`, { method: "DELETE", apiKey });
    for (const answer of [
      await patch(apiKey, id, { rateLimitPerSecond: 3 }),
      await api.request(`${WEBHOOKS}/${id}/enable`, { method: "POST", apiKey }),
    ]) {
      expect([answer.status, answer.body.errorCode]).toEqual([404, "KS-4206"]);
    }
    const [listed] = (await api.request(WEBHOOKS, { apiKey })).body.webhooks;
    expect(listed).toMatchObject({ isActive: false, disabledAt: null, rateLimitPerSecond: null });
  });
});
