import { rotateWebhookSecret, webhookDeliveries, webhookRecoveries, webhooks } from "@outcomes/db";
import { deliveryRow, webhookWithDeliveries } from "@outcomes/testkit/deliveries";
import { testApiForFile } from "@outcomes/testkit/file-fixture";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";

/**
 * POST /webhooks/{id}/recover and /rotate-secret (CONTRACT §11): the API's side. No webhooks worker
 * runs here; what the recover job does is tested beside it (apps/worker/src/webhooks/recovery*.test.ts).
 */
const api = testApiForFile();

const WEBHOOKS = "/api/partner/v1/webhooks";
const DAY_MS = 86_400_000;
const recover = (apiKey: string, webhookId: string, json: unknown) =>
  api.request(`${WEBHOOKS}/${webhookId}/recover`, { method: "POST", apiKey, json });
const rotate = (apiKey: string, webhookId: string, json?: unknown) =>
  api.request(`${WEBHOOKS}/${webhookId}/rotate-secret`, { method: "POST", apiKey, json });

async function deliveriesOf(webhookId: string) {
  return api.database.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.webhookId, webhookId));
}
async function recoveriesOf(webhookId: string) {
  return api.database.db.select().from(webhookRecoveries).where(eq(webhookRecoveries.webhookId, webhookId));
}
async function storedSecrets(webhookId: string) {
  const [row] = await api.database.db.select().from(webhooks).where(eq(webhooks.id, webhookId));
  return row!;
}

describe("POST /webhooks/{webhookId}/recover", () => {
  it("answers 202 at once with the failed deliveries since `since` it will deliver again, and queues their job", async () => {
    const world = await webhookWithDeliveries(api, ["failed", "failed", "succeeded", "pending", "failed", "failed"]);
    const [beforeSince, failed, , , newestFailed, redelivered] = world.deliveryIds;
    // The partner already redelivered the last one: it is being delivered, not lost.
    await api.request(`${WEBHOOKS}/${world.webhookId}/deliveries/${redelivered}/redeliver`, {
      method: "POST",
      apiKey: world.apiKey,
    });
    const since = (await deliveryRow(api, failed!))!.createdAt.toISOString();

    const first = await recover(world.apiKey, world.webhookId, { since });
    expect([first.status, first.body]).toEqual([202, { recovered: 2 }]);
    // The worker makes the new deliveries (apps/worker/src/webhooks/recovery.test.ts): none yet.
    expect(await deliveriesOf(world.webhookId)).toHaveLength(7);
    const [recovery, ...others] = await recoveriesOf(world.webhookId);
    expect(others).toEqual([]);
    expect(recovery).toMatchObject({ counted: 2, redelivered: 0, status: "running", cursorId: null });
    expect(recovery!.since.toISOString()).toBe(since);
    const job = await api.deps.producers.queues["webhook-recovery"].getJob(recovery!.id);
    expect([job?.name, job?.data]).toEqual(["webhook.recover", { recoveryId: recovery!.id }]);

    // Again: the running recovery covers them, so nothing is counted twice or queued again.
    expect((await recover(world.apiKey, world.webhookId, { since })).body).toEqual({ recovered: 0 });
    expect(await recoveriesOf(world.webhookId)).toHaveLength(1);
    // `since` 30 days back adds only the one before `since`, to a recovery of its own.
    const monthAgo = new Date(Date.now() - 30 * DAY_MS).toISOString();
    expect((await recover(world.apiKey, world.webhookId, { since: monthAgo })).body).toEqual({ recovered: 1 });
    expect((await recoveriesOf(world.webhookId)).map((row) => row.counted).sort()).toEqual([1, 2]);
    // The API wrote no delivery: the originals stay as they were.
    expect(await deliveriesOf(world.webhookId)).toHaveLength(7);
    expect((await deliveryRow(api, beforeSince!))!.status).toBe("failed");
    expect((await deliveryRow(api, newestFailed!))!.status).toBe("failed");
  });

  it("refuses a missing, malformed or too old `since` and unknown fields, changing nothing", async () => {
    const world = await webhookWithDeliveries(api, ["failed"]);
    const cases: Array<[unknown, string]> = [
      [{}, "KS-4102"],
      [{ since: null }, "KS-4102"],
      [{ since: "" }, "KS-4102"],
      [{ since: "yesterday" }, "KS-4101"],
      [{ since: 1_700_000_000 }, "KS-4101"],
      [{ since: new Date().toISOString().slice(0, 19) }, "KS-4101"],
      [{ since: new Date(Date.now() - 31 * DAY_MS).toISOString() }, "KS-4101"],
      [{ since: new Date().toISOString(), extra: true }, "KS-4101"],
    ];
    for (const [body, code] of cases) {
      const response = await recover(world.apiKey, world.webhookId, body);
      expect([response.status, response.body.errorCode], JSON.stringify(body)).toEqual([400, code]);
    }
    expect(await deliveriesOf(world.webhookId)).toHaveLength(1);
    expect(await recoveriesOf(world.webhookId)).toEqual([]);
  });

  it("names a `since` that is no date once, as no date (not also as too old)", async () => {
    const world = await webhookWithDeliveries(api, ["failed"]);
    const response = await recover(world.apiKey, world.webhookId, { since: "garbage" });
    expect([response.status, response.body.errorCode]).toEqual([400, "KS-4101"]);
    expect(response.body.details).toHaveLength(1);
    expect(response.body.details[0].message).not.toMatch(/days back/);
  });

  it("takes a blank body with a JSON Content-Type as no body where the body is optional", async () => {
    const world = await webhookWithDeliveries(api, ["failed"]);
    for (const body of ["", "  ", "\n"]) {
      const rotated = await api.request(`${WEBHOOKS}/${world.webhookId}/rotate-secret`, {
        method: "POST",
        apiKey: world.apiKey,
        headers: { "Content-Type": "application/json" },
        body,
      });
      expect([rotated.status, JSON.stringify(body)]).toEqual([200, JSON.stringify(body)]);
    }
  });

  it("counts each failed delivery once under concurrent recovers", async () => {
    const world = await webhookWithDeliveries(api, Array(40).fill("failed"));
    const since = new Date(Date.now() - DAY_MS).toISOString();
    // 24 partner calls on a 10-connection pool: they take turns, and each counts what the ones before left.
    const recovered = await Promise.all(
      Array.from({ length: 24 }, () => recover(world.apiKey, world.webhookId, { since })),
    );
    expect(recovered.every((response) => response.status === 202)).toBe(true);
    expect(recovered.reduce((sum, response) => sum + response.body.recovered, 0)).toBe(40);
    expect((await recoveriesOf(world.webhookId)).map((row) => row.counted)).toEqual([40]);
  });

  it("records nothing when there is nothing to recover", async () => {
    const world = await webhookWithDeliveries(api, ["succeeded", "pending"]);
    const since = new Date(Date.now() - DAY_MS).toISOString();
    const queue = api.deps.producers.queues["webhook-recovery"];
    const queued = await queue.getWaitingCount();
    expect((await recover(world.apiKey, world.webhookId, { since })).body).toEqual({ recovered: 0 });
    expect(await recoveriesOf(world.webhookId)).toEqual([]);
    expect(await queue.getWaitingCount()).toBe(queued);
  });
});

describe("POST /webhooks/{webhookId}/rotate-secret", () => {
  it("makes a new whsec_ secret, shown once, keeping the old one for the overlap (default one day)", async () => {
    const { apiKey } = await api.createPartner();
    const registered = await api.request(WEBHOOKS, {
      method: "POST",
      apiKey,
      json: { url: "https://hooks.partner.test/", events: ["spin.large_win"] },
    });
    const webhookId = registered.body.id as string;

    const started = Date.now();
    const first = await rotate(apiKey, webhookId);
    expect(first.status).toBe(200);
    expect(Object.keys(first.body).sort()).toEqual(["previousSecretExpiresAt", "secret", "webhookId"]);
    expect(first.body.webhookId).toBe(webhookId);
    expect(first.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(first.body.secret).not.toBe(registered.body.secret);
    const expiresAt = Date.parse(first.body.previousSecretExpiresAt);
    expect(expiresAt).toBeGreaterThanOrEqual(started + DAY_MS - 1000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + DAY_MS + 1000);
    expect(await storedSecrets(webhookId)).toMatchObject({
      secret: first.body.secret,
      previousSecret: registered.body.secret,
    });

    // Rotating again: the secret just replaced becomes the previous one; the first one is gone.
    const second = await rotate(apiKey, webhookId, { overlapSeconds: 60 });
    expect(Date.parse(second.body.previousSecretExpiresAt) - Date.now()).toBeLessThanOrEqual(60_000);
    expect(Date.parse(second.body.previousSecretExpiresAt) - started).toBeGreaterThanOrEqual(59_000);
    expect(await storedSecrets(webhookId)).toMatchObject({
      secret: second.body.secret,
      previousSecret: first.body.secret,
    });
    for (const overlapSeconds of [0, 604_800]) {
      expect((await rotate(apiKey, webhookId, { overlapSeconds })).status).toBe(200);
    }
    // Listings never show a secret.
    const listed = await api.request(WEBHOOKS, { apiKey });
    expect(JSON.stringify(listed.body)).not.toContain("whsec_");
  });

  it("chains rotations made at once: each one's previous secret is the one another made", async () => {
    const owner = await api.createPartner();
    const registered = await api.request(WEBHOOKS, {
      method: "POST",
      apiKey: owner.apiKey,
      json: { url: "https://hooks.partner.test/", events: ["spin.large_win"] },
    });
    const webhookId = registered.body.id as string;
    // The repository call, since only it shows each rotation's previous secret; 16 on a 10-connection pool.
    const rotations = await Promise.all(
      Array.from({ length: 16 }, () =>
        rotateWebhookSecret(api.database.db, { partnerId: owner.partnerId, environment: "sandbox" }, webhookId, 60),
      ),
    );
    const made = rotations.map((rotation) => rotation.secret);
    const replaced = rotations.map((rotation) => rotation.previousSecret);
    const last = (await storedSecrets(webhookId)).secret;
    // A chain from the registration secret to the last one: no secret shown was dropped unused.
    expect(replaced.sort()).toEqual([registered.body.secret, ...made.filter((secret) => secret !== last)].sort());
  });

  it("refuses an overlap outside 0..604800 seconds or of the wrong type, changing nothing", async () => {
    const { apiKey } = await api.createPartner();
    const webhookId = (
      await api.request(WEBHOOKS, {
        method: "POST",
        apiKey,
        json: { url: "https://hooks.partner.test/", events: ["spin.large_win"] },
      })
    ).body.id as string;
    const before = await storedSecrets(webhookId);
    for (const body of [
      { overlapSeconds: -1 },
      { overlapSeconds: 604_801 },
      { overlapSeconds: 1.5 },
      { overlapSeconds: "60" },
      { other: 1 },
    ]) {
      const response = await rotate(apiKey, webhookId, body);
      expect([response.status, response.body.errorCode], JSON.stringify(body)).toEqual([400, "KS-4101"]);
    }
    expect(await storedSecrets(webhookId)).toEqual(before);
  });
});

describe("recover and rotate-secret ownership", () => {
  it("answer a deleted webhook 404 KS-4206, another environment's 404 KS-4206, another partner's 403 KS-4207", async () => {
    const world = await webhookWithDeliveries(api, ["failed"]);
    const stranger = await api.createPartner();
    const production = await api.createPartner({ environment: "production" });
    const since = new Date(Date.now() - DAY_MS).toISOString();
    const calls = [
      (apiKey: string, webhookId: string) => recover(apiKey, webhookId, { since }),
      (apiKey: string, webhookId: string) => rotate(apiKey, webhookId, {}),
    ];
    for (const call of calls) {
      const foreign = await call(stranger.apiKey, world.webhookId);
      expect([foreign.status, foreign.body.errorCode]).toEqual([403, "KS-4207"]);
      const otherEnvironment = await call(production.apiKey, world.webhookId);
      expect([otherEnvironment.status, otherEnvironment.body.errorCode]).toEqual([404, "KS-4206"]);
      const unknown = await call(world.apiKey, "whk_nope");
      expect([unknown.status, unknown.body.errorCode]).toEqual([404, "KS-4206"]);
    }
    const before = await storedSecrets(world.webhookId);
    expect(before.previousSecret).toBeNull();
    await api.request(`${WEBHOOKS}/${world.webhookId}`, { method: "DELETE", apiKey: world.apiKey });
    for (const call of calls) {
      const deleted = await call(world.apiKey, world.webhookId);
      expect([deleted.status, deleted.body.errorCode]).toEqual([404, "KS-4206"]);
    }
    expect(await deliveriesOf(world.webhookId)).toHaveLength(1);
    expect((await storedSecrets(world.webhookId)).secret).toBe(before.secret);
  });
});
