import { testApiForFile } from "@outcomes/testkit/file-fixture";
import { describe, expect, it } from "vitest";

/**
 * Two API processes over one database and Redis prefix: a change made through one must hold on the
 * other within 1 s (CONTRACT §2). Each check warms the second instance's cache right before the
 * change, so passing sooner than the 1-s cache bound proves the pub/sub invalidation, not expiry.
 */
const first = testApiForFile();
const second = testApiForFile({}, { shareWith: first });

const CACHE_BOUND_MS = 1000;

const admin = (path: string, json?: unknown) =>
  first.request(`/api/admin/v1${path}`, { method: "POST", admin: true, json });
const code = async (apiKey: string) =>
  (await second.request("/api/partner/v1/no-such-route", { apiKey })).body.errorCode as string;

async function newKey(slug: string) {
  const partner = (await admin("/partners", { slug, name: slug })).body;
  const key = (await admin(`/partners/${partner.id}/api-keys`, { environment: "sandbox" })).body;
  return { partnerId: partner.id as string, keyId: key.id as string, apiKey: key.key as string };
}

/** Polls the second instance until `expected`; returns ms from the change and from the cache warm-up. */
async function timeUntil(apiKey: string, expected: string, warmedAt: number, changedAt: number) {
  let seen = await code(apiKey);
  while (seen !== expected && Date.now() - changedAt < 2 * CACHE_BOUND_MS) {
    await new Promise((resolve) => setTimeout(resolve, 5));
    seen = await code(apiKey);
  }
  expect(seen).toBe(expected);
  return { sinceChange: Date.now() - changedAt, sinceWarm: Date.now() - warmedAt };
}

describe("changes reach a second API process within 1 s", () => {
  it("revocation", async () => {
    const { partnerId, keyId, apiKey } = await newKey("revoked-elsewhere");
    const warmedAt = Date.now();
    expect(await code(apiKey)).toBe("KS-4215");
    const changedAt = Date.now();
    expect((await admin(`/partners/${partnerId}/api-keys/${keyId}/revoke`)).status).toBe(200);
    const timing = await timeUntil(apiKey, "KS-4003", warmedAt, changedAt);
    expect(timing.sinceChange).toBeLessThan(CACHE_BOUND_MS);
    expect(timing.sinceWarm).toBeLessThan(CACHE_BOUND_MS);
  });

  it("deactivation and re-activation", async () => {
    const { partnerId, apiKey } = await newKey("deactivated-elsewhere");
    let warmedAt = Date.now();
    expect(await code(apiKey)).toBe("KS-4215");
    let changedAt = Date.now();
    await admin(`/partners/${partnerId}/deactivate`);
    let timing = await timeUntil(apiKey, "KS-4005", warmedAt, changedAt);
    expect(timing.sinceWarm).toBeLessThan(CACHE_BOUND_MS);

    warmedAt = Date.now();
    expect(await code(apiKey)).toBe("KS-4005");
    changedAt = Date.now();
    await admin(`/partners/${partnerId}/activate`);
    timing = await timeUntil(apiKey, "KS-4215", warmedAt, changedAt);
    expect(timing.sinceWarm).toBeLessThan(CACHE_BOUND_MS);
  });

  it("rotation with no overlap", async () => {
    const { partnerId, keyId, apiKey } = await newKey("rotated-elsewhere");
    const warmedAt = Date.now();
    expect(await code(apiKey)).toBe("KS-4215");
    const changedAt = Date.now();
    const rotated = await admin(`/partners/${partnerId}/api-keys/${keyId}/rotate`, { overlapHours: 0 });
    const timing = await timeUntil(apiKey, "KS-4004", warmedAt, changedAt);
    expect(timing.sinceWarm).toBeLessThan(CACHE_BOUND_MS);
    expect(await code(rotated.body.key)).toBe("KS-4215");
  });

  it("maintenance on and off", async () => {
    const { apiKey } = await newKey("maintenance-elsewhere");
    const warmedAt = Date.now();
    expect(await code(apiKey)).toBe("KS-4215");
    const changedAt = Date.now();
    await admin("/maintenance", { enabled: true });
    const timing = await timeUntil(apiKey, "KS-5002", warmedAt, changedAt);
    expect(timing.sinceWarm).toBeLessThan(CACHE_BOUND_MS);
    const offAt = Date.now();
    await admin("/maintenance", { enabled: false });
    expect((await timeUntil(apiKey, "KS-4215", offAt, offAt)).sinceChange).toBeLessThan(CACHE_BOUND_MS);
  });
});
