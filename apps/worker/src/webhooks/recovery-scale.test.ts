import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { webhookRecoveries } from "@outcomes/db";
import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import { redeliveryTally, seedFailedDeliveries } from "@outcomes/testkit/deliveries";
import { eventually, registerWebhook, startRole } from "@outcomes/testkit/workers";
import { eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { webhooksRole } from "./index.js";

/**
 * Recover over a long outage (CONTRACT §9 "Bounded work", §11): 50,000 failed deliveries, 25 of the
 * worker's chunks, by default; `RECOVERY_SCALE_BACKLOG=200000` for the figures in docs/webhooks.md
 * (the suite runs the smaller one: the same flat memory shows at 25 chunks as at 100, in a quarter of
 * the time). The API runs in this process and the worker is started only after the answer, so the
 * memory read here is the API's. The `webhooks` queue is paused: what is checked is that every new
 * delivery is written and queued, not sent (200,000 sends take minutes here).
 */
const BACKLOG = Number(process.env.RECOVERY_SCALE_BACKLOG ?? 50_000);

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;
const megabytes = (bytes: number) => Math.round(bytes / 1e5) / 10;

let api: TestApi;
let worker: Awaited<ReturnType<typeof startRole>> | undefined;
let target: Awaited<ReturnType<typeof registerWebhook>>;
let seedMs: number;
beforeAll(async () => {
  api = await startTestApi();
  target = await registerWebhook(api, "https://hooks.partner.test/", ["block.low_reserve"]);
  const started = performance.now();
  await seedFailedDeliveries(api, { ...target, count: BACKLOG });
  seedMs = performance.now() - started;
}, 120_000);
afterAll(async () => {
  await worker?.close();
  await api?.close();
});

/** Runs `during` while sampling this process's RSS; the growth of RSS (peak) and heap (after GC) over it. */
async function memoryAround<T>(during: () => Promise<T>) {
  gc();
  const before = process.memoryUsage();
  let peakRss = before.rss;
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
  }, 5);
  try {
    const result = await during();
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
    gc();
    const after = process.memoryUsage();
    return { result, before, rssGrowth: peakRss - before.rss, heapGrowth: after.heapUsed - before.heapUsed };
  } finally {
    clearInterval(sampler);
  }
}

describe(`recover over ${BACKLOG.toLocaleString("en")} failed deliveries`, () => {
  it("answers 202 at once with the count, in flat API memory; the worker then makes each new delivery once", async () => {
    const deliver = api.deps.producers.queues.webhooks;
    await deliver.pause();
    const since = new Date(Date.now() - 3 * 3600_000).toISOString();

    const started = performance.now();
    const { result: response, ...memory } = await memoryAround(() =>
      api.request(`/api/partner/v1/webhooks/${target.webhookId}/recover`, {
        method: "POST",
        apiKey: target.apiKey,
        json: { since },
      }),
    );
    const answerMs = performance.now() - started;
    console.info(
      `recover of ${BACKLOG}: seeded in ${Math.round(seedMs)} ms; 202 in ${Math.round(answerMs)} ms; ` +
        `API RSS ${megabytes(memory.before.rss)} MB, peak growth ${megabytes(memory.rssGrowth)} MB; ` +
        `heap ${megabytes(memory.before.heapUsed)} MB, growth after GC ${megabytes(memory.heapGrowth)} MB`,
    );
    expect([response.status, response.body]).toEqual([202, { recovered: BACKLOG }]);
    expect(answerMs).toBeLessThan(2000);
    expect(memory.rssGrowth).toBeLessThan(30e6);
    expect(memory.heapGrowth).toBeLessThan(30e6);
    // Nothing made yet: the worker does it.
    const [made] = await api.database.db.execute<{ n: number }>(
      sql`select count(*)::int as n from webhook_deliveries where redelivery_of is not null`,
    );
    expect(made!.n).toBe(0);

    const [recovery] = await api.database.db
      .select()
      .from(webhookRecoveries)
      .where(eq(webhookRecoveries.webhookId, target.webhookId));
    const job = (await api.deps.producers.queues["webhook-recovery"].getJob(recovery!.id))!;
    const workerStarted = performance.now();
    const workerMemory = await memoryAround(async () => {
      // The queue is paused, so nothing would make room: not paced by it.
      worker = await startRole(api, webhooksRole({ recoveryQueueAhead: Number.MAX_SAFE_INTEGER }));
      await eventually(async () => (await job.getState()) === "completed", 300_000, 100);
    });
    const workerMs = performance.now() - workerStarted;
    console.info(
      `worker made ${BACKLOG} new deliveries in ${Math.round(workerMs)} ms (${Math.round((BACKLOG / workerMs) * 1000)}/s); ` +
        `process RSS peak growth ${megabytes(workerMemory.rssGrowth)} MB, heap growth after GC ${megabytes(workerMemory.heapGrowth)} MB`,
    );
    // Chunk by chunk: nothing of the backlog is kept.
    expect(workerMemory.heapGrowth).toBeLessThan(30e6);
    const [finished] = await api.database.db
      .select()
      .from(webhookRecoveries)
      .where(eq(webhookRecoveries.id, recovery!.id));
    expect(finished).toMatchObject({ status: "done", counted: BACKLOG, redelivered: BACKLOG });

    // Every failed delivery has exactly one new delivery, of the same event with the same bytes.
    expect(await redeliveryTally(api, target.webhookId)).toEqual({
      originals: BACKLOG,
      copies: BACKLOG,
      missing: 0,
      twice: 0,
      wrong: 0,
      open: BACKLOG,
    });

    // Each queued once (job id = delivery id), and the recovery's progress shown on its job.
    const counts = await deliver.getJobCounts("waiting", "active", "delayed");
    expect(Object.values(counts).reduce((sum, n) => sum + n, 0)).toBe(BACKLOG);
    const finishedJob = await api.deps.producers.queues["webhook-recovery"].getJob(recovery!.id);
    expect(finishedJob?.progress).toEqual({ status: "done", redelivered: BACKLOG, counted: BACKLOG });
  }, 300_000);
});
