import { JOBS, notifyEvents } from "@outcomes/queue";
import { type Job, UnrecoverableError, Worker } from "bullmq";
import type { RoleStarter } from "../context.js";
import { jobLockOptions } from "../job-lock.js";
import { sweepExpiringKeys } from "./sweep.js";

/** The scheduler's id: one per deployment, so every worker upserting it keeps a single schedule. */
export const KEY_EXPIRY_SCHEDULER_ID = "key-expiry.sweep";

/**
 * The `key-expiry` role: a BullMQ job scheduler runs `key-expiry.sweep` on KEY_EXPIRY_CRON (UTC);
 * operators can queue one now (POST /api/admin/v1/jobs/key-expiry/run). Upserting the scheduler
 * from every worker is idempotent, and the sweep is safe to run twice at once.
 */
export const startKeyExpiryRole: RoleStarter = async (ctx) => {
  const { env, db, producers, logger } = ctx;
  const definition = JOBS["key-expiry.sweep"];
  await producers.queues[definition.queue].upsertJobScheduler(
    KEY_EXPIRY_SCHEDULER_ID,
    { pattern: env.KEY_EXPIRY_CRON, tz: "UTC" },
    { name: "key-expiry.sweep", data: {}, opts: definition.options },
  );

  const connection = ctx.newConnection();
  const worker = new Worker(
    definition.queue,
    async (job: Job) => {
      if (job.name !== "key-expiry.sweep") throw new UnrecoverableError(`Unknown job ${job.name}`);
      const notices = await sweepExpiringKeys(db);
      if (notices.length > 0) {
        await notifyEvents(producers);
        logger.info({ notices: notices.length }, "api_key.expiring notices written");
      }
      return { notices: notices.length };
    },
    { connection, prefix: ctx.bullPrefix, concurrency: 1, ...jobLockOptions(env) },
  );
  worker.on("error", (error) => logger.error({ err: error }, "key-expiry worker error"));

  return {
    close: async () => {
      await worker.close();
      await connection.quit();
    },
  };
};
