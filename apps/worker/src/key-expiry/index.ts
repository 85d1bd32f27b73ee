import { createPartitionsAhead, dropExpiredIdempotencyPartitions } from "@outcomes/db";
import { notifyEvents } from "@outcomes/queue";
import type { RoleStarter, WorkerContext } from "../context.js";
import { upsertJobSchedule } from "../job-schedules.js";
import { startQueueWorker } from "../queue-worker.js";
import { syncIssuedKeys } from "./issued-keys.js";
import { sweepExpiringKeys } from "./sweep.js";

/** The schedulers' ids: one each per deployment, so every worker upserting them keeps one schedule. */
export const KEY_EXPIRY_SCHEDULER_ID = "key-expiry.sweep";
export const PARTITIONS_SCHEDULER_ID = "partitions.maintain";
/** Partitions are made 7 days ahead, so an hourly run leaves a week to notice a stopped role. */
export const PARTITIONS_EVERY_MS = 60 * 60_000;
/** The row-by-row purge the partitions job replaced: its scheduler is removed where it still exists. */
const RETIRED_SCHEDULER_IDS = ["idempotency.purge"];

/**
 * The `key-expiry` role, the deployment's housekeeping: a BullMQ job scheduler runs
 * `key-expiry.sweep` on KEY_EXPIRY_CRON (UTC), which also makes the issued-key set match Postgres
 * (as the role does when it starts), and another `partitions.maintain` every hour and at once when
 * the role starts; operators can queue either now (`jobs run key-expiry` also in the
 * operator API, `jobs run partitions` in the CLI only). Upserting the schedulers from every worker
 * is idempotent (one job per tick), and both jobs are safe to run twice at once.
 */
export const startKeyExpiryRole: RoleStarter = async (ctx) => {
  const { env, producers, logger } = ctx;
  await upsertJobSchedule(producers, KEY_EXPIRY_SCHEDULER_ID, "key-expiry.sweep", {
    pattern: env.KEY_EXPIRY_CRON,
    tz: "UTC",
  });
  await upsertJobSchedule(producers, PARTITIONS_SCHEDULER_ID, "partitions.maintain", { every: PARTITIONS_EVERY_MS });
  for (const id of RETIRED_SCHEDULER_IDS) await producers.queues["key-expiry"].removeJobScheduler(id);
  // Keys issued while no process kept the set (an older release) are listed now, not at the next sweep.
  await syncIssuedKeys(ctx).then(
    (issuedKeys) => logger.info({ issuedKeys }, "issued-key set made whole"),
    (error) => logger.warn({ err: error }, "issued-key set not made whole; the next sweep tries again"),
  );

  return startQueueWorker(
    "key-expiry",
    {
      "key-expiry.sweep": async () => {
        const notices = await sweepExpiringKeys(ctx.db, new Date(), logger);
        if (notices.length > 0) {
          await notifyEvents(producers);
          logger.info({ notices: notices.length }, "api_key.expiring notices written");
        }
        return { notices: notices.length, issuedKeys: await syncIssuedKeys(ctx) };
      },
      "partitions.maintain": () => maintainPartitions(ctx),
    },
    { ...ctx, concurrency: 1 },
  );
};

/**
 * Makes every time-partitioned table's partitions up to 7 days ahead, then drops each idempotency
 * day whose records have all expired: one DETACH and one DROP per day, never a row-by-row delete.
 */
async function maintainPartitions({ db, logger }: WorkerContext) {
  const created = await createPartitionsAhead(db);
  const dropped = await dropExpiredIdempotencyPartitions(db);
  if (created.length > 0 || dropped.length > 0) logger.info({ created, dropped }, "partitions maintained");
  return { created, dropped };
}
