import { replayFailedDeliveries, rotateWebhookSecret, webhookDeliveries, webhooks } from "@outcomes/db";
import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import { deliveryRow, webhookWithDeliveries } from "@outcomes/testkit/deliveries";
import { eq, inArray } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/** POST /webhooks/{id}/recover and /rotate-secret (CONTRACT §11); no webhooks worker runs here. */
let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api?.close();
});

const WEBHOOKS = "/api/partner/v1/webhooks";
const DAY_MS = 86_400_000;
const recover = (apiKey: string, webhookId: string, json: unknown) =>
  api.request(`${WEBHOOKS}/${webhookId}/recover`, { method: "POST", apiKey, json });
const rotate = (apiKey: string, webhookId: string, json?: unknown) =>
  api.request(`${WEBHOOKS}/${webhookId}/rotate-secret`, { method: "POST", apiKey, json });

async function deliveriesOf(webhookId: string) {
  return api.database.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.webhookId, webhookId));
}
async function storedSecrets(webhookId: string) {
  const [row] = await api.database.db.select().from(webhooks).where(eq(webhooks.id, webhookId));
  return row!;
}

describe("POST /webhooks/{webhookId}/recover", () => {
  it("queues a new delivery of the same event for each delivery that failed since `since`, once", async () => {
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
    const made = (await deliveriesOf(world.webhookId)).filter(
      (row) => row.redeliveryOf === failed || row.redeliveryOf === newestFailed,
    );
    expect(made).toHaveLength(2);
    for (const copy of made) {
      const original = (await deliveryRow(api, copy.redeliveryOf!))!;
      expect(copy).toMatchObject({ eventId: original.eventId, body: original.body, status: "pending", attempts: 0 });
      expect(copy.id).not.toBe(original.id);
      const job = await api.deps.producers.queues.webhooks.getJob(copy.id);
      expect([job?.name, job?.data]).toEqual(["webhook.deliver", { deliveryId: copy.id }]);
    }
    const listed = await api.request(`${WEBHOOKS}/${world.webhookId}/deliveries`, { apiKey: world.apiKey });
    expect(listed.body.total).toBe(9);

    // Again: nothing left to recover; the delivery before `since` stays failed and alone.
    expect((await recover(world.apiKey, world.webhookId, { since })).body).toEqual({ recovered: 0 });
    const all = await deliveriesOf(world.webhookId);
    expect(all.filter((row) => row.redeliveryOf === beforeSince)).toEqual([]);

    // A recovered delivery that fails in its turn is recovered again, as a delivery of its own.
    await api.database.db
      .update(webhookDeliveries)
      .set({ status: "failed", attempts: 5, completedAt: new Date() })
      .where(
        inArray(
          webhookDeliveries.id,
          made.map((copy) => copy.id),
        ),
      );
    expect((await recover(world.apiKey, world.webhookId, { since })).body).toEqual({ recovered: 2 });
    // `since` 30 days back takes the oldest too.
    const monthAgo = new Date(Date.now() - 30 * DAY_MS).toISOString();
    expect((await recover(world.apiKey, world.webhookId, { since: monthAgo })).body).toEqual({ recovered: 1 });
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
  });

  it("recovers each failed delivery exactly once under concurrent recovers and operator replays", async () => {
    const world = await webhookWithDeliveries(api, Array(40).fill("failed"));
    const since = new Date(Date.now() - DAY_MS).toISOString();
    // 24 partner calls on a 10-connection pool, and 3 operator bulk replays beside them.
    const [recovered, replayed] = await Promise.all([
      Promise.all(Array.from({ length: 24 }, () => recover(world.apiKey, world.webhookId, { since }))),
      Promise.all(
        Array.from({ length: 3 }, () => replayFailedDeliveries(api.database.db, { webhookId: world.webhookId })),
      ),
    ]);
    expect(recovered.every((response) => response.status === 202)).toBe(true);
    const total =
      recovered.reduce((sum, response) => sum + response.body.recovered, 0) +
      replayed.reduce((sum, run) => sum + run.replayed.length, 0);
    expect(total).toBe(40);
    const copies = (await deliveriesOf(world.webhookId)).filter((row) => row.redeliveryOf !== null);
    expect(new Set(copies.map((row) => row.redeliveryOf)).size).toBe(40);
    expect(copies).toHaveLength(40);
  });

  it("leaves nothing open on a webhook deleted while recovering", async () => {
    const since = new Date(Date.now() - DAY_MS).toISOString();
    // Several races side by side, so the two cross in some of them.
    const worlds = await Promise.all(
      Array.from({ length: 8 }, () => webhookWithDeliveries(api, Array(10).fill("failed"))),
    );
    await Promise.all(
      worlds.map(async (world) => {
        const [recovered, deleted] = await Promise.all([
          recover(world.apiKey, world.webhookId, { since }),
          api.request(`${WEBHOOKS}/${world.webhookId}`, { method: "DELETE", apiKey: world.apiKey }),
        ]);
        expect(deleted.status).toBe(200);
        // Either recovered first (then the delete closed the copies) or refused after the delete.
        expect([202, 404]).toContain(recovered.status);
        const open = (await deliveriesOf(world.webhookId)).filter((row) => row.status !== "failed");
        expect(open).toEqual([]);
      }),
    );
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
