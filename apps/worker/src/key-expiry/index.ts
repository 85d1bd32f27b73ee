import { purgeExpiredIdempotencyRecords } from "@outcomes/db";
import { notifyEvents } from "@outcomes/queue";
import type { Job } from "bullmq";
import type { RoleStarter, WorkerContext } from "../context.js";
import { upsertJobSchedule } from "../job-schedules.js";
import { startQueueWorker } from "../queue-worker.js";
import { sweepExpiringKeys } from "./sweep.js";

/** The schedulers' ids: one each per deployment, so every worker upserting them keeps one schedule. */
export const KEY_EXPIRY_SCHEDULER_ID = "key-expiry.sweep";
export const IDEMPOTENCY_PURGE_SCHEDULER_ID = "idempotency.purge";
/** At 100 keyed spins/s a run deletes about 60,000 records: well under a second of work. */
export const IDEMPOTENCY_PURGE_EVERY_MS = 10 * 60_000;

/**
 * The `key-expiry` role, the deployment's housekeeping: a BullMQ job scheduler runs
 * `key-expiry.sweep` on KEY_EXPIRY_CRON (UTC), and another `idempotency.purge` every 10 minutes;
 * operators can queue either now (`jobs run key-expiry` also in the operator API,
 * `jobs run idempotency-purge` in the CLI only). Upserting the schedulers from every
 * worker is idempotent (one job per tick), and both jobs are safe to run twice at once.
 */
export const startKeyExpiryRole: RoleStarter = async (ctx) => {
  const { env, db, producers, logger } = ctx;
  await upsertJobSchedule(producers, KEY_EXPIRY_SCHEDULER_ID, "key-expiry.sweep", {
    pattern: env.KEY_EXPIRY_CRON,
    tz: "UTC",
  });
  await upsertJobSchedule(producers, IDEMPOTENCY_PURGE_SCHEDULER_ID, "idempotency.purge", {
    every: IDEMPOTENCY_PURGE_EVERY_MS,
  });

  return startQueueWorker(
    "key-expiry",
    {
      "key-expiry.sweep": async () => {
        const notices = await sweepExpiringKeys(db);
        if (notices.length > 0) {
          await notifyEvents(producers);
          logger.info({ notices: notices.length }, "api_key.expiring notices written");
        }
        return { notices: notices.length };
      },
      "idempotency.purge": (_payload, job) => purgeIdempotencyRecords(ctx, job),
    },
    { ...ctx, concurrency: 1 },
  );
};

/** One run deletes every expired record, batch by batch; the job's progress counts them. */
async function purgeIdempotencyRecords({ db, logger }: WorkerContext, job: Job) {
  const deleted = await purgeExpiredIdempotencyRecords(db, {
    onBatch: async (deletedSoFar) => {
      await job.updateProgress({ deleted: deletedSoFar });
      logger.debug({ deleted: deletedSoFar }, "idempotency purge batch done");
    },
  });
  if (deleted > 0) logger.info({ deleted }, "expired idempotency records purged");
  return { deleted };
}
