import { createDatabase, purgeExpiredIdempotencyRecords } from "@outcomes/db";
import { runIdempotencyPurgeNow } from "@outcomes/queue";
import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import { eventually, startRole } from "@outcomes/testkit/workers";
import type { Job } from "bullmq";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IDEMPOTENCY_PURGE_EVERY_MS, IDEMPOTENCY_PURGE_SCHEDULER_ID, startKeyExpiryRole } from "./index.js";

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api?.close();
});

const queue = () => api.deps.producers.queues["key-expiry"];

/** `count` records spread evenly over `from`..`to` hours ago, in one statement. */
async function insertRecords(prefix: string, count: number, from: number, to: number) {
  await api.database.db.execute(sql`
    insert into idempotency_keys (partner_id, environment, key, request_hash, response_status, response_body, created_at)
    select 'ptr_purge', 'sandbox', ${prefix} || i, repeat('a', 64), 200, '{"spinId":"spn_0123456789abcdef"}'::jsonb,
      now() - make_interval(secs => ${from * 3600}::float8 + i * ${((to - from) * 3600) / count}::float8)
    from generate_series(1, ${count}) i`);
}

async function counts() {
  const [row] = await api.database.db.execute<{ expired: number; live: number }>(sql`
    select count(*) filter (where created_at <= now() - interval '24 hours')::int as expired,
      count(*) filter (where key like 'live-%')::int as live
    from idempotency_keys`);
  return row!;
}

async function finished(jobId: string): Promise<Job> {
  return eventually(
    async () => {
      const job = await queue().getJob(jobId);
      return job?.finishedOn ? job : null;
    },
    120_000,
    50,
  );
}

/** Waits out the run the scheduler queues at once when a role starts, so the tests' own runs are the only ones. */
async function scheduledRunDone() {
  await eventually(async () => {
    const pending = await queue().getJobs(["waiting", "active", "prioritized"]);
    const completed = await queue().getJobs(["completed"]);
    return (
      !pending.some((job) => job.name === "idempotency.purge") &&
      completed.some((job) => job.name === "idempotency.purge")
    );
  });
}

describe("idempotency.purge", () => {
  it("deletes a day of expired records (200,000) in one run of the key-expiry role's job, keeping live ones", async () => {
    const role = await startRole(api, startKeyExpiryRole);
    try {
      await scheduledRunDone();
      const schedulers = await queue().getJobSchedulers();
      expect(schedulers.find((s) => s.key === IDEMPOTENCY_PURGE_SCHEDULER_ID)).toMatchObject({
        every: IDEMPOTENCY_PURGE_EVERY_MS,
      });

      await insertRecords("expired-", 200_000, 25, 48);
      await insertRecords("live-", 1_000, 0, 23.8);
      expect(await counts()).toEqual({ expired: 200_000, live: 1_000 });

      const job = await finished(await runIdempotencyPurgeNow(api.deps.producers));
      expect([job.failedReason, job.returnvalue, job.progress]).toEqual([
        undefined,
        { deleted: 200_000 },
        { deleted: 200_000 },
      ]);
      expect(await counts()).toEqual({ expired: 0, live: 1_000 });
      console.info(`idempotency.purge: 200,000 expired records in one run, ${job.finishedOn! - job.processedOn!} ms`);
    } finally {
      await role.close();
    }
  });

  it("is safe with two worker copies and concurrent runs: every expired record is deleted exactly once", async () => {
    const roles = [await startRole(api, startKeyExpiryRole), await startRole(api, startKeyExpiryRole)];
    try {
      await scheduledRunDone();
      expect((await queue().getJobSchedulers()).map((s) => s.key).sort()).toEqual([
        IDEMPOTENCY_PURGE_SCHEDULER_ID,
        "key-expiry.sweep",
      ]);

      // Two jobs at once, one per worker copy.
      await insertRecords("expired-a-", 120_000, 25, 48);
      const jobs = await Promise.all([1, 2].map(() => runIdempotencyPurgeNow(api.deps.producers)));
      const runs = await Promise.all(jobs.map(finished));
      expect(runs.map((run) => run.failedReason)).toEqual([undefined, undefined]);
      expect(runs.reduce((sum, run) => sum + run.returnvalue.deleted, 0)).toBe(120_000);
      expect(await counts()).toEqual({ expired: 0, live: 1_000 });

      // Four purges at once on their own connections: the deleted counts add up to the expired rows.
      await insertRecords("expired-b-", 120_000, 25, 48);
      const clients = Array.from({ length: 4 }, () => createDatabase(api.database.url, { max: 1 }));
      try {
        const deleted = await Promise.all(clients.map((client) => purgeExpiredIdempotencyRecords(client.db)));
        expect(deleted.reduce((sum, n) => sum + n, 0)).toBe(120_000);
      } finally {
        await Promise.all(clients.map((client) => client.close()));
      }
      expect(await counts()).toEqual({ expired: 0, live: 1_000 });
    } finally {
      await Promise.all(roles.map((role) => role.close()));
    }
  });
});
