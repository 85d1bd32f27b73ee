import { hashApiKey } from "@outcomes/core";
import { createDatabase } from "@outcomes/db";
import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api.close();
});

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
let slugCounter = 0;

async function newPartner(): Promise<string> {
  slugCounter += 1;
  const response = await api.request("/api/admin/v1/partners", {
    method: "POST",
    admin: true,
    json: { slug: `keys-${slugCounter}`, name: `Keys ${slugCounter}` },
  });
  return response.body.id;
}

const post = (path: string, json?: unknown) =>
  api.request(`/api/admin/v1/partners/${path}`, { method: "POST", admin: true, json });
const issue = (partnerId: string, json: unknown = { environment: "sandbox" }) => post(`${partnerId}/api-keys`, json);
const listKeys = (partnerId: string, query = "") =>
  api.request(`/api/admin/v1/partners/${partnerId}/api-keys${query}`, { admin: true });
/** The partner API's answer to a key: 404 KS-4215 (an unknown route) means the key was accepted. */
const probe = async (apiKey: string) => (await api.request("/api/partner/v1/no-such-route", { apiKey })).body.errorCode;

describe("POST /partners/{partnerId}/api-keys", () => {
  it("issues a working key of the asked environment, valid 365 days by default", async () => {
    const partnerId = await newPartner();
    const before = Date.now();
    const response = await issue(partnerId, { environment: "production" });
    expect(response.status).toBe(201);
    expect(Object.keys(response.body).sort()).toEqual(["createdAt", "environment", "expiresAt", "id", "key", "prefix"]);
    expect(response.body.key).toMatch(/^kp_prod_[0-9A-Za-z]{38}$/);
    expect(response.body.key.startsWith(response.body.prefix)).toBe(true);
    expect(response.body.environment).toBe("production");
    const expiresAt = Date.parse(response.body.expiresAt);
    expect(expiresAt).toBeGreaterThanOrEqual(before + 365 * DAY_MS);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 365 * DAY_MS);
    expect(await probe(response.body.key)).toBe("KS-4215");
  });

  it("takes an explicit expiry", async () => {
    const partnerId = await newPartner();
    const expiresAt = new Date(Date.now() + 7 * DAY_MS).toISOString();
    const response = await issue(partnerId, { environment: "sandbox", expiresAt });
    expect([response.status, response.body.expiresAt]).toEqual([201, expiresAt]);
    expect(response.body.key).toMatch(/^ks_sandbox_/);
  });

  it.each([
    ["an expiry in the past", { environment: "sandbox", expiresAt: "2020-01-01T00:00:00Z" }, "KS-4101"],
    ["an expiry that is not a date-time", { environment: "sandbox", expiresAt: "tomorrow" }, "KS-4101"],
    ["an unknown environment", { environment: "staging" }, "KS-4101"],
    ["an unknown field", { environment: "sandbox", scopes: ["all"] }, "KS-4101"],
    ["a missing environment", {}, "KS-4102"],
    ["a null environment", { environment: null }, "KS-4102"],
  ])("refuses %s with 400 %s and issues nothing", async (_case, json, code) => {
    const partnerId = await newPartner();
    const response = await issue(partnerId, json);
    expect([response.status, response.body.errorCode]).toEqual([400, code]);
    expect((await listKeys(partnerId)).body.total).toBe(0);
  });

  it("refuses a deactivated partner with 403 KS-4210 and an unknown one with 404 KS-4209", async () => {
    const partnerId = await newPartner();
    await post(`${partnerId}/deactivate`);
    const deactivated = await issue(partnerId);
    expect([deactivated.status, deactivated.body.errorCode]).toEqual([403, "KS-4210"]);
    const unknown = await issue("ptr_unknown");
    expect([unknown.status, unknown.body.errorCode]).toEqual([404, "KS-4209"]);
  });
});

describe("GET /partners/{partnerId}/api-keys", () => {
  it("lists keys newest first without secrets, paged", async () => {
    const partnerId = await newPartner();
    const issued = [];
    for (const environment of ["sandbox", "production", "sandbox"]) {
      issued.push((await issue(partnerId, { environment })).body);
      await new Promise((resolve) => setTimeout(resolve, 3));
    }
    const response = await listKeys(partnerId);
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ page: 1, limit: 20, total: 3 });
    expect(response.body.apiKeys).toEqual(
      issued.reverse().map((key) => ({
        id: key.id,
        prefix: key.prefix,
        environment: key.environment,
        expiresAt: key.expiresAt,
        revokedAt: null,
        lastUsedAt: null,
        createdAt: key.createdAt,
      })),
    );
    expect(JSON.stringify(response.body)).not.toMatch(/ks_sandbox_[0-9A-Za-z]{38}|kp_prod_[0-9A-Za-z]{38}|keyHash/);
    const page = await listKeys(partnerId, "?page=2&limit=2");
    expect(page.body.apiKeys).toEqual([response.body.apiKeys[2]]);
  });

  it("answers 404 KS-4209 for an unknown partner and KS-4101 for a bad page", async () => {
    const unknown = await listKeys("ptr_unknown");
    expect([unknown.status, unknown.body.errorCode]).toEqual([404, "KS-4209"]);
    const badPage = await listKeys(await newPartner(), "?limit=500");
    expect([badPage.status, badPage.body.errorCode]).toEqual([400, "KS-4101"]);
  });
});

describe("POST /partners/{partnerId}/api-keys/{keyId}/revoke", () => {
  it("revokes at once; repeating keeps the first revokedAt", async () => {
    const partnerId = await newPartner();
    const key = (await issue(partnerId)).body;
    expect(await probe(key.key)).toBe("KS-4215");
    const first = await post(`${partnerId}/api-keys/${key.id}/revoke`);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ id: key.id, prefix: key.prefix, revokedAt: expect.any(String) });
    expect(await probe(key.key)).toBe("KS-4003");
    const again = await post(`${partnerId}/api-keys/${key.id}/revoke`);
    expect([again.status, again.body.revokedAt]).toEqual([200, first.body.revokedAt]);
  });

  it("answers KS-4212 for an unknown key, KS-4213 for another partner's, KS-4209 for an unknown partner", async () => {
    const owner = await newPartner();
    const other = await newPartner();
    const key = (await issue(owner)).body;
    const unknown = await post(`${owner}/api-keys/key_unknown/revoke`);
    expect([unknown.status, unknown.body.errorCode]).toEqual([404, "KS-4212"]);
    const foreign = await post(`${other}/api-keys/${key.id}/revoke`);
    expect([foreign.status, foreign.body.errorCode]).toEqual([403, "KS-4213"]);
    const noPartner = await post(`ptr_unknown/api-keys/${key.id}/revoke`);
    expect([noPartner.status, noPartner.body.errorCode]).toEqual([404, "KS-4209"]);
    expect(await probe(key.key)).toBe("KS-4215");
  });
});

describe("POST /partners/{partnerId}/api-keys/{keyId}/rotate", () => {
  it("issues a new key of the same environment and keeps the old one for 24 hours", async () => {
    const partnerId = await newPartner();
    const old = (await issue(partnerId, { environment: "production" })).body;
    const before = Date.now();
    const rotated = await post(`${partnerId}/api-keys/${old.id}/rotate`);
    expect(rotated.status).toBe(201);
    expect(rotated.body.key).toMatch(/^kp_prod_/);
    expect(rotated.body.id).not.toBe(old.id);
    expect(Date.parse(rotated.body.expiresAt)).toBeGreaterThanOrEqual(before + 365 * DAY_MS);
    const listed = (await listKeys(partnerId)).body.apiKeys;
    const oldExpiry = Date.parse(listed.find((key: { id: string }) => key.id === old.id).expiresAt);
    expect(oldExpiry).toBeGreaterThanOrEqual(before + 24 * HOUR_MS);
    expect(oldExpiry).toBeLessThanOrEqual(Date.now() + 24 * HOUR_MS);
    expect([await probe(old.key), await probe(rotated.body.key)]).toEqual(["KS-4215", "KS-4215"]);
  });

  it("honours overlapHours and expiresAt, and never lengthens the old key's life", async () => {
    const partnerId = await newPartner();
    const soon = new Date(Date.now() + 2 * HOUR_MS).toISOString();
    const old = (await issue(partnerId, { environment: "sandbox", expiresAt: soon })).body;
    const newExpiry = new Date(Date.now() + 30 * DAY_MS).toISOString();
    const rotated = await post(`${partnerId}/api-keys/${old.id}/rotate`, { overlapHours: 48, expiresAt: newExpiry });
    expect([rotated.status, rotated.body.expiresAt]).toEqual([201, newExpiry]);
    const listed = (await listKeys(partnerId)).body.apiKeys;
    expect(listed.find((key: { id: string }) => key.id === old.id).expiresAt).toBe(soon);

    const immediate = await post(`${partnerId}/api-keys/${rotated.body.id}/rotate`, { overlapHours: 0 });
    expect(immediate.status).toBe(201);
    expect(await probe(rotated.body.key)).toBe("KS-4004");
    expect(await probe(immediate.body.key)).toBe("KS-4215");
  });

  it.each([
    ["a negative overlap", { overlapHours: -1 }],
    ["an overlap over 720 hours", { overlapHours: 721 }],
    ["an overlap given as a string", { overlapHours: "24" }],
    ["an expiry in the past", { expiresAt: "2001-01-01T00:00:00Z" }],
    ["an unknown field", { environment: "production" }],
  ])("refuses %s with 400 KS-4101 and changes nothing", async (_case, json) => {
    const partnerId = await newPartner();
    const old = (await issue(partnerId)).body;
    const response = await post(`${partnerId}/api-keys/${old.id}/rotate`, json);
    expect([response.status, response.body.errorCode]).toEqual([400, "KS-4101"]);
    const listed = (await listKeys(partnerId)).body;
    expect(listed.total).toBe(1);
    expect(listed.apiKeys[0].expiresAt).toBe(old.expiresAt);
  });

  it("refuses a revoked key, a deactivated partner, an unknown or foreign key", async () => {
    const partnerId = await newPartner();
    const other = await newPartner();
    const revoked = (await issue(partnerId)).body;
    await post(`${partnerId}/api-keys/${revoked.id}/revoke`);
    const rotateRevoked = await post(`${partnerId}/api-keys/${revoked.id}/rotate`);
    expect([rotateRevoked.status, rotateRevoked.body.errorCode]).toEqual([400, "KS-4101"]);
    expect(rotateRevoked.body.message).toContain("revoked");

    const live = (await issue(partnerId)).body;
    const foreign = await post(`${other}/api-keys/${live.id}/rotate`);
    expect([foreign.status, foreign.body.errorCode]).toEqual([403, "KS-4213"]);
    const unknown = await post(`${partnerId}/api-keys/key_unknown/rotate`);
    expect([unknown.status, unknown.body.errorCode]).toEqual([404, "KS-4212"]);
    await post(`${partnerId}/deactivate`);
    const deactivated = await post(`${partnerId}/api-keys/${live.id}/rotate`);
    expect([deactivated.status, deactivated.body.errorCode]).toEqual([403, "KS-4210"]);
    expect((await listKeys(partnerId)).body.total).toBe(2);
  });
});

describe("store failures", () => {
  it("answer KS-5007 (create partner) and KS-5008 (issue, rotate) with nothing internal in the body", async () => {
    const partnerId = await newPartner();
    const key = (await issue(partnerId)).body;
    const closed = createDatabase(api.database.url, { max: 1 });
    await closed.close();
    const working = api.deps.db;
    api.deps.db = closed.db;
    try {
      const created = await api.request("/api/admin/v1/partners", {
        method: "POST",
        admin: true,
        json: { slug: "store-down", name: "Store down" },
      });
      const issued = await issue(partnerId);
      const rotated = await post(`${partnerId}/api-keys/${key.id}/rotate`);
      for (const [response, code, message] of [
        [created, "KS-5007", "Failed to create partner"],
        [issued, "KS-5008", "Failed to issue API key"],
        [rotated, "KS-5008", "Failed to issue API key"],
      ] as const) {
        expect(response.status).toBe(500);
        expect(response.body).toEqual({ message, errorCode: code, requestId: response.headers.get("x-request-id") });
      }
    } finally {
      api.deps.db = working;
    }
    expect((await listKeys(partnerId)).body.total).toBe(1);
  });
});

describe("the issued-key set follows issue, rotation and revocation", () => {
  /** The key's listed expiry (epoch ms), or null when it is not listed. */
  const listedExpiry = async (apiKey: string) => {
    const score = await api.deps.redis.zscore(api.deps.keys.issuedApiKeys, hashApiKey(apiKey));
    return score === null ? null : Number(score);
  };

  it("lists an issued key until its expiry, the rotated one until the end of its overlap, and unlists a revoked one", async () => {
    const partnerId = await newPartner();
    const old = (await issue(partnerId)).body;
    expect(await listedExpiry(old.key)).toBe(Date.parse(old.expiresAt));

    const rotated = (await post(`${partnerId}/api-keys/${old.id}/rotate`, { overlapHours: 1 })).body;
    const oldExpiry = (await listKeys(partnerId)).body.apiKeys.find(
      (key: { id: string }) => key.id === old.id,
    ).expiresAt;
    expect(await listedExpiry(rotated.key)).toBe(Date.parse(rotated.expiresAt));
    expect(await listedExpiry(old.key)).toBe(Date.parse(oldExpiry));
    expect(Date.parse(oldExpiry)).toBeLessThanOrEqual(Date.now() + HOUR_MS);

    await post(`${partnerId}/api-keys/${rotated.id}/revoke`);
    expect(await listedExpiry(rotated.key)).toBeNull();
    expect(await listedExpiry(old.key)).toBe(Date.parse(oldExpiry));
  });
});
