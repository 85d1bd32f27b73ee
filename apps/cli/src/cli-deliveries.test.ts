import { bullPrefix, type RedisClient } from "@outcomes/queue";
import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import { cliAgainst, errorCode } from "@outcomes/testkit/cli";
import { testRedis } from "@outcomes/testkit/databases";
import { deliveryRow, webhookWithDeliveries as fixture, type TestDeliveryStatus } from "@outcomes/testkit/deliveries";
import { Queue } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * `deliveries list` and `deliveries replay` against a real API's database and Redis prefix. The rows
 * are what the webhooks worker's fan-out writes (the worker is not running here); each replay is
 * checked in Postgres and in the webhooks queue.
 */
let api: TestApi;
let connection: RedisClient;
let webhooksQueue: Queue;
beforeAll(async () => {
  api = await startTestApi();
  connection = testRedis();
  webhooksQueue = new Queue("webhooks", { connection, prefix: bullPrefix(api.redisPrefix) });
});
afterAll(async () => {
  await webhooksQueue.close();
  connection.disconnect();
  await api.close();
});

const { cli, cliJson } = cliAgainst(() => api);

const webhookWithDeliveries = (statuses: TestDeliveryStatus[]) => fixture(api, statuses);
const row = async (id: string) => (await deliveryRow(api, id))!;

describe("deliveries list", () => {
  it("lists across partners with filters, each delivery as the partner API lists it plus its owner", async () => {
    const world = await webhookWithDeliveries(["succeeded", "failed", "retrying"]);
    const mine = await cliJson("deliveries", "list", "--webhook", world.webhookId);
    const fromApi = await api.request(`/api/partner/v1/webhooks/${world.webhookId}/deliveries`, {
      apiKey: world.apiKey,
    });
    expect(mine.deliveries).toEqual(
      fromApi.body.deliveries.map((delivery: object) => ({
        ...delivery,
        webhookId: world.webhookId,
        partnerId: world.partnerId,
        environment: "sandbox",
        redeliveryOf: null,
      })),
    );
    expect(mine).toMatchObject({ page: 1, limit: 20, total: 3 });
    const failed = await cliJson("deliveries", "list", "--status", "failed", "--partner", world.partnerId);
    expect(failed.deliveries.map((d: { id: string }) => d.id)).toEqual([world.deliveryIds[1]]);

    const table = await cli("deliveries", "list", "--partner", world.partnerId, "--limit", "2");
    expect(table.stdout).toMatch(/^ID\s+EVENT\s+STATUS\s+ATTEMPTS\s+LAST STATUS\s+WEBHOOK\s+PARTNER/);
    expect(table.stdout).toMatch(new RegExp(`${world.deliveryIds[2]}\\s+block.low_reserve\\s+retrying\\s+1/5\\s+500`));
    expect(table.stdout).toContain("page 1 of 2, 2 shown, 3 in total");
    expect((await cli("deliveries", "list", "--status", "lost")).code).toBe(1);
  });
});

describe("deliveries replay", () => {
  it("replays one delivery as the partner API's redeliver does: new id, same event and body, queued", async () => {
    const world = await webhookWithDeliveries(["failed"]);
    const original = await row(world.deliveryIds[0]!);
    const replay = await cliJson("deliveries", "replay", original.id);
    expect(replay).toMatchObject({
      status: "pending",
      attempts: 0,
      redeliveryOf: original.id,
      event: "block.low_reserve",
    });
    const stored = await row(replay.id);
    expect([stored.eventId, stored.body, stored.webhookId]).toEqual([original.eventId, original.body, world.webhookId]);
    expect((await webhooksQueue.getJob(replay.id))?.data).toEqual({ deliveryId: replay.id });
    // Asked again, it makes another one (an explicit request each time).
    const table = await cli("deliveries", "replay", original.id);
    expect(table.stdout).toMatch(new RegExp(`^Delivery ${original.id} replayed as dlv_\\w+\\.`));

    expect(errorCode(await cli("deliveries", "replay", "dlv_unknown"))).toEqual([1, "error KS-4215"]);
    expect(errorCode(await cli("deliveries", "replay"))).toEqual([1, "error KS-4101"]);
    expect(errorCode(await cli("deliveries", "replay", original.id, "--failed"))).toEqual([1, "error KS-4101"]);
    await api.request(`/api/partner/v1/webhooks/${world.webhookId}`, { method: "DELETE", apiKey: world.apiKey });
    const deleted = await cli("deliveries", "replay", original.id);
    expect([deleted.code, deleted.stderr]).toEqual([
      1,
      "error KS-4101: Webhook is deleted: nothing can be delivered to it\n",
    ]);
  });

  it("--failed replays each failed delivery to an active webhook once, however often it runs", async () => {
    const world = await webhookWithDeliveries(["failed", "failed", "succeeded", "pending", "failed"]);
    const [oldFailed, failed, , , newestFailed] = world.deliveryIds;
    const gone = await webhookWithDeliveries(["failed"]);
    await api.request(`/api/partner/v1/webhooks/${gone.webhookId}`, { method: "DELETE", apiKey: gone.apiKey });

    const since = new Date((await row(failed!)).completedAt!.getTime()).toISOString();
    const first = await cliJson("deliveries", "replay", "--failed", "--webhook", world.webhookId, "--since", since);
    expect(first.deliveries.map((d: { redeliveryOf: string }) => d.redeliveryOf)).toEqual([failed, newestFailed]);
    expect(first).toMatchObject({ replayed: 2, more: false });
    for (const replay of first.deliveries) expect(await webhooksQueue.getJob(replay.id)).toBeTruthy();

    // Two runs at once, then another: the one failed delivery left is replayed exactly once.
    const racing = await Promise.all([
      cliJson("deliveries", "replay", "--failed", "--partner", world.partnerId),
      cliJson("deliveries", "replay", "--failed", "--partner", world.partnerId),
    ]);
    expect(racing.flatMap((r) => r.deliveries.map((d: { redeliveryOf: string }) => d.redeliveryOf))).toEqual([
      oldFailed,
    ]);
    const table = await cli("deliveries", "replay", "--failed", "--partner", world.partnerId);
    expect(table.stdout).toBe("0 failed deliveries replayed.\n");
    // The deleted webhook's failed delivery was never replayed.
    const goneList = await cliJson("deliveries", "list", "--webhook", gone.webhookId);
    expect(goneList.total).toBe(1);
    expect((await cli("deliveries", "replay", "--failed", "--since", "yesterday")).code).toBe(1);
  });
});
