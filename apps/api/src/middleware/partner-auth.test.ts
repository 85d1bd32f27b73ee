import { generateApiKey } from "@outcomes/core";
import { apiKeys, createDatabase, players } from "@outcomes/db";
import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KeyVerifier } from "../auth/key-verifier.js";

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api.close();
});

/** 404 KS-4215 (an unknown route) means the key was accepted; anything else is the refusal. */
async function probe(target: TestApi, apiKey: string | undefined, headers: Record<string, string> = {}) {
  const response = await target.request("/api/partner/v1/no-such-route", { apiKey, headers });
  return [response.status, response.body.errorCode];
}
const admin = (path: string, json?: unknown) =>
  api.request(`/api/admin/v1/partners${path}`, { method: "POST", admin: true, json });
let slugCounter = 0;
async function partnerWithKeys() {
  slugCounter += 1;
  const partner = (await admin("", { slug: `auth-${slugCounter}`, name: "Auth" })).body;
  const sandbox = (await admin(`/${partner.id}/api-keys`, { environment: "sandbox" })).body;
  const production = (await admin(`/${partner.id}/api-keys`, { environment: "production" })).body;
  return { partnerId: partner.id as string, sandbox, production };
}

describe("partner authentication codes", () => {
  it("accepts a valid key of either environment", async () => {
    const { sandbox, production } = await partnerWithKeys();
    expect(await probe(api, sandbox.key)).toEqual([404, "KS-4215"]);
    expect(await probe(api, production.key)).toEqual([404, "KS-4215"]);
  });

  it("KS-4001 for an absent or empty header", async () => {
    expect(await probe(api, undefined)).toEqual([401, "KS-4001"]);
    expect(await probe(api, undefined, { "X-API-Key": "" })).toEqual([401, "KS-4001"]);
  });

  it("KS-4002 for a bad checksum, an unknown key and garbage", async () => {
    const { sandbox } = await partnerWithKeys();
    const last = sandbox.key.at(-1);
    const badChecksum = sandbox.key.slice(0, -1) + (last === "0" ? "1" : "0");
    expect(await probe(api, badChecksum)).toEqual([401, "KS-4002"]);
    expect(await probe(api, generateApiKey("sandbox").key)).toEqual([401, "KS-4002"]);
    expect(await probe(api, "Bearer something")).toEqual([401, "KS-4002"]);
    expect(await probe(api, `${sandbox.key}x`)).toEqual([401, "KS-4002"]);
  });

  it("KS-4002 for a key of an environment this deployment does not serve", async () => {
    const { sandbox, production } = await partnerWithKeys();
    const sandboxOnly = await startTestApi({ ALLOWED_ENVIRONMENTS: "sandbox" }, { shareWith: api });
    try {
      expect(await probe(sandboxOnly, production.key)).toEqual([401, "KS-4002"]);
      expect(await probe(sandboxOnly, sandbox.key)).toEqual([404, "KS-4215"]);
    } finally {
      await sandboxOnly.close();
    }
  });

  it("KS-4003 for a revoked key", async () => {
    const { partnerId, sandbox } = await partnerWithKeys();
    await admin(`/${partnerId}/api-keys/${sandbox.id}/revoke`);
    expect(await probe(api, sandbox.key)).toEqual([401, "KS-4003"]);
  });

  it("KS-4004 for an expired key", async () => {
    const { sandbox } = await partnerWithKeys();
    await api.database.db
      .update(apiKeys)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(apiKeys.id, sandbox.id));
    expect(await probe(api, sandbox.key)).toEqual([401, "KS-4004"]);
  });

  it("KS-4005 while the partner is deactivated, and the keys work again once re-activated", async () => {
    const { partnerId, sandbox, production } = await partnerWithKeys();
    await admin(`/${partnerId}/deactivate`);
    expect(await probe(api, sandbox.key)).toEqual([401, "KS-4005"]);
    expect(await probe(api, production.key)).toEqual([401, "KS-4005"]);
    await admin(`/${partnerId}/activate`);
    expect(await probe(api, sandbox.key)).toEqual([404, "KS-4215"]);
  });

  it("500 KS-5004 when the key store fails, with nothing internal in the body", async () => {
    const { sandbox } = await partnerWithKeys();
    const closed = createDatabase(api.database.url, { max: 1 });
    await closed.close();
    const working = api.deps.keyVerifier;
    api.deps.keyVerifier = new KeyVerifier(closed.db, ["sandbox", "production"]);
    try {
      const response = await api.request("/api/partner/v1/no-such-route", { apiKey: sandbox.key });
      expect([response.status, response.body.errorCode]).toEqual([500, "KS-5004"]);
      expect(response.body).toEqual({
        message: "Authentication service error",
        errorCode: "KS-5004",
        requestId: response.headers.get("x-request-id"),
      });
      // A mistyped key is still refused without the store.
      expect(await probe(api, "ks_sandbox_mistyped")).toEqual([401, "KS-4002"]);
    } finally {
      api.deps.keyVerifier = working;
    }
  });
});

describe("environment separation", () => {
  it("shows a partner's production data to its production key only", async () => {
    const { partnerId, sandbox, production } = await partnerWithKeys();
    const stranger = await partnerWithKeys();
    await api.database.db.insert(players).values({ partnerId, environment: "production", externalId: "player-prod" });
    const lookUp = (apiKey: string) => api.request("/api/partner/v1/players/player-prod", { apiKey });
    const own = await lookUp(production.key);
    expect([own.status, own.body.playerId]).toEqual([200, "player-prod"]);
    for (const other of [sandbox.key, stranger.production.key]) {
      const response = await lookUp(other);
      expect([response.status, response.body.errorCode]).toEqual([404, "KS-4204"]);
    }
  });

  it("gives each environment of a partner its own rate-limit bucket", async () => {
    const { sandbox, production } = await partnerWithKeys();
    const tight = await startTestApi({ RATE_LIMIT_REQUESTS_PER_SECOND: "2" }, { shareWith: api });
    try {
      const sandboxStatuses = [];
      for (let i = 0; i < 4; i++) sandboxStatuses.push((await probe(tight, sandbox.key))[1]);
      expect(sandboxStatuses.at(-1)).toBe("KS-4292");
      expect(await probe(tight, production.key)).toEqual([404, "KS-4215"]);
    } finally {
      await tight.close();
    }
  });
});

describe("lastUsedAt", () => {
  const lastUsed = async (partnerId: string, keyId: string): Promise<string | null> => {
    const listed = await api.request(`/api/admin/v1/partners/${partnerId}/api-keys?limit=100`, { admin: true });
    return listed.body.apiKeys.find((key: { id: string }) => key.id === keyId).lastUsedAt;
  };
  const waitForChange = async (partnerId: string, keyId: string, from: string | null) => {
    const deadline = Date.now() + 2000;
    let value = await lastUsed(partnerId, keyId);
    while (value === from && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      value = await lastUsed(partnerId, keyId);
    }
    return value;
  };

  it("is null until the key is used, then moves with use on each API process", async () => {
    const { partnerId, sandbox } = await partnerWithKeys();
    expect(await lastUsed(partnerId, sandbox.id)).toBeNull();
    const before = Date.now();
    await probe(api, sandbox.key);
    const first = await waitForChange(partnerId, sandbox.id, null);
    expect(Date.parse(first ?? "")).toBeGreaterThanOrEqual(before - 5);

    await new Promise((resolve) => setTimeout(resolve, 5));
    const second = await startTestApi({}, { shareWith: api });
    try {
      await probe(second, sandbox.key);
      const moved = await waitForChange(partnerId, sandbox.id, first);
      expect(Date.parse(moved ?? "")).toBeGreaterThan(Date.parse(first ?? ""));
    } finally {
      await second.close();
    }
  });
});
