import { generateApiKey, newId } from "@outcomes/core";
import { apiKeyExpiryNotices, apiKeys, createDatabase, ensurePartitions, events } from "@outcomes/db";
import { verifyWebhookSignature } from "@outcomes/sdk";
import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import { eventually, registerWebhook, startReceiver, startRole } from "@outcomes/testkit/workers";
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { webhooksRole } from "../webhooks/index.js";
import { KEY_EXPIRY_SCHEDULER_ID, startKeyExpiryRole } from "./index.js";
import { sweepExpiringKeys } from "./sweep.js";

const DAY_MS = 24 * 3_600_000;
const now = new Date("2026-07-01T12:00:00.000Z");

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({ KEY_EXPIRY_CRON: "*/30 * * * *" });
  // The sweeps below run at a fixed past date: their events' month needs its partition.
  await ensurePartitions(api.database.db, "events", { from: now, to: new Date(now.getTime() + 5 * DAY_MS) });
});
afterAll(async () => {
  await api?.close();
});

async function key(partnerId: string, expiresAt: Date, options: { revoked?: boolean } = {}) {
  const generated = generateApiKey("sandbox");
  const id = newId("key");
  await api.database.db.insert(apiKeys).values({
    id,
    partnerId,
    environment: "sandbox",
    keyHash: generated.hash,
    prefix: generated.displayPrefix,
    expiresAt,
    revokedAt: options.revoked ? now : null,
  });
  return { id, prefix: generated.displayPrefix, expiresAt };
}

async function noticesOf(apiKeyId: string) {
  const rows = await api.database.db
    .select({ days: apiKeyExpiryNotices.daysBeforeExpiry })
    .from(apiKeyExpiryNotices)
    .where(eq(apiKeyExpiryNotices.apiKeyId, apiKeyId));
  return rows.map((row) => row.days).sort((a, b) => b - a);
}

async function expiryEventsOf(apiKeyId: string) {
  const rows = await api.database.db
    .select({ payload: events.payload })
    .from(events)
    .where(and(eq(events.type, "api_key.expiring"), eq(events.partnerId, await partnerOf(apiKeyId))));
  return rows
    .map((row) => row.payload as { data: { apiKeyId: string; daysBeforeExpiry: number } })
    .filter((payload) => payload.data.apiKeyId === apiKeyId);
}

async function partnerOf(apiKeyId: string) {
  const [row] = await api.database.db
    .select({ partnerId: apiKeys.partnerId })
    .from(apiKeys)
    .where(eq(apiKeys.id, apiKeyId));
  return row!.partnerId;
}

describe("key-expiry sweep", () => {
  it("sends the smallest threshold reached and records the larger ones as passed", async () => {
    const { partnerId } = await api.createPartner();
    const far = await key(partnerId, new Date(now.getTime() + 40 * DAY_MS));
    const month = await key(partnerId, new Date(now.getTime() + 20 * DAY_MS));
    const week = await key(partnerId, new Date(now.getTime() + 5 * DAY_MS));
    const day = await key(partnerId, new Date(now.getTime() + 12 * 3_600_000));
    const expired = await key(partnerId, new Date(now.getTime() - 1000));
    const revoked = await key(partnerId, new Date(now.getTime() + 2 * DAY_MS), { revoked: true });

    const notices = await sweepExpiringKeys(api.database.db, now);
    const byKey = Object.fromEntries(notices.map((notice) => [notice.apiKeyId, notice.daysBeforeExpiry]));
    expect(byKey).toMatchObject({ [month.id]: 30, [week.id]: 7, [day.id]: 1 });
    for (const quiet of [far, expired, revoked]) expect(byKey[quiet.id]).toBeUndefined();
    expect(await noticesOf(week.id)).toEqual([30, 7]);
    expect(await noticesOf(day.id)).toEqual([30, 7, 1]);

    const [event] = await expiryEventsOf(week.id);
    expect(event).toMatchObject({
      type: "api_key.expiring",
      environment: "sandbox",
      data: {
        apiKeyId: week.id,
        prefix: week.prefix,
        environment: "sandbox",
        expiresAt: week.expiresAt.toISOString(),
        daysBeforeExpiry: 7,
      },
    });

    // Six days later the week key reaches the 1-day threshold: one more notice, for 1 only.
    const later = new Date(now.getTime() + 4.5 * DAY_MS);
    const next = await sweepExpiringKeys(api.database.db, later);
    expect(next.filter((notice) => notice.apiKeyId === week.id).map((notice) => notice.daysBeforeExpiry)).toEqual([1]);
    expect((await expiryEventsOf(week.id)).map((e) => e.data.daysBeforeExpiry)).toEqual([7, 1]);
  });

  it("sends each notice exactly once when sweeps run twice and concurrently", async () => {
    const { partnerId } = await api.createPartner();
    const keys: Array<{ id: string }> = [];
    for (let i = 0; i < 20; i++) keys.push(await key(partnerId, new Date(now.getTime() + (i + 1) * 0.25 * DAY_MS)));
    const clients = Array.from({ length: 3 }, () => createDatabase(api.database.url, { max: 2 }));
    try {
      const runs = await Promise.all([...clients, ...clients].map((client) => sweepExpiringKeys(client.db, now)));
      expect(runs.flat().filter((notice) => keys.some((k) => k.id === notice.apiKeyId))).toHaveLength(20);
    } finally {
      await Promise.all(clients.map((client) => client.close()));
    }
    expect(await sweepExpiringKeys(api.database.db, now)).toEqual([]);
    for (const k of keys) expect(await expiryEventsOf(k.id)).toHaveLength(1);
  });
});

describe("key-expiry role", () => {
  it("schedules the sweep on KEY_EXPIRY_CRON in UTC and runs it on the operator's trigger", async () => {
    const target = await startReceiver();
    const { partnerId, secret } = await registerWebhook(api, target.url, ["api_key.expiring"]);
    const soon = await key(partnerId, new Date(Date.now() + 3 * DAY_MS));
    const keyExpiry = await startRole(api, startKeyExpiryRole);
    const webhooksWorker = await startRole(api, webhooksRole({ pollIntervalMs: 100 }));
    try {
      const schedulers = await api.deps.producers.queues["key-expiry"].getJobSchedulers();
      const sweeps = schedulers.filter((s) => s.name === "key-expiry.sweep");
      expect(sweeps).toHaveLength(1);
      expect(sweeps[0]).toMatchObject({ key: KEY_EXPIRY_SCHEDULER_ID, pattern: "*/30 * * * *", tz: "UTC" });

      const unauthorised = await api.request("/api/admin/v1/jobs/key-expiry/run", { method: "POST" });
      expect([unauthorised.status, unauthorised.body.errorCode]).toEqual([401, "KS-4001"]);
      const runs = await Promise.all(
        [1, 2].map(() => api.request("/api/admin/v1/jobs/key-expiry/run", { method: "POST", admin: true })),
      );
      for (const run of runs) {
        expect(run.status).toBe(202);
        expect(run.body.jobId).toEqual(expect.any(String));
      }

      await eventually(() => target.requests.length >= 1);
      const request = target.requests[0]!;
      expect(request.headers["x-service-event"]).toBe("api_key.expiring");
      expect(
        verifyWebhookSignature({
          rawBody: request.rawBody,
          signatureHeader: String(request.headers["x-service-signature"]),
          secret,
        }),
      ).toBe(true);
      expect(JSON.parse(request.rawBody.toString()).data).toMatchObject({ apiKeyId: soon.id, daysBeforeExpiry: 7 });
      const queue = api.deps.producers.queues["key-expiry"];
      // The role's queue also runs partitions.maintain: count the sweeps only.
      await eventually(
        async () => (await queue.getJobs(["completed"])).filter((job) => job.name === "key-expiry.sweep").length >= 2,
      );
      expect(target.requests).toHaveLength(1);
    } finally {
      await webhooksWorker.close();
      await keyExpiry.close();
      await target.close();
    }
  });
});
