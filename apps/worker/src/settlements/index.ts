import { parseReportDate } from "@outcomes/core";
import { sealSpinRollups } from "@outcomes/db";
import { notifyEvents } from "@outcomes/queue";
import { type Job, UnrecoverableError } from "bullmq";
import type { RoleStarter } from "../context.js";
import { upsertJobSchedule } from "../job-schedules.js";
import { startQueueWorker } from "../queue-worker.js";
import { runSettlements } from "./run.js";

/** The schedulers' ids: one each per deployment, so every worker upserting them keeps one schedule. */
export const SETTLEMENT_SCHEDULER_ID = "settlement.daily";
export const ROLLUP_SCHEDULER_ID = "settlement.rollup";
/** How often the hourly roll-ups are advanced: an hour is sealed a minute or two after it ends. */
export const ROLLUP_EVERY_MS = 60_000;

/**
 * The `settlements` role: a BullMQ job scheduler queues `settlement.generate` on SETTLEMENT_CRON
 * (UTC), which settles the previous UTC day; operators queue the same job on demand. A second
 * scheduler runs `settlement.rollup` every minute, sealing finished hours into the roll-ups the
 * reports add up. Upserting the schedulers from every copy keeps one schedule each, and two runs at
 * once still yield one report each (the unique index and row lock in the repository decide).
 */
export const startSettlementsRole: RoleStarter = async (ctx) => {
  const { env, db, producers, logger } = ctx;
  await upsertJobSchedule(producers, SETTLEMENT_SCHEDULER_ID, "settlement.generate", {
    pattern: env.SETTLEMENT_CRON,
    tz: "UTC",
  });
  await upsertJobSchedule(producers, ROLLUP_SCHEDULER_ID, "settlement.rollup", { every: ROLLUP_EVERY_MS });

  return startQueueWorker(
    "settlements",
    {
      "settlement.rollup": async () => {
        const sealed = await sealSpinRollups(db);
        if (sealed.sealedHours > 0) logger.info(sealed, "spin roll-ups sealed");
        return sealed;
      },
      "settlement.generate": async (payload, job) => {
        if (payload.reportDate !== undefined && parseReportDate(payload.reportDate) === null) {
          throw new UnrecoverableError(`Bad reportDate ${payload.reportDate}: expected YYYY-MM-DD`);
        }
        const summary = await runSettlements(
          db,
          payload,
          scheduledAt(job),
          {
            progress: (progress) => job.updateProgress({ ...progress }),
            log: async (line) => {
              await job.log(line);
            },
          },
          logger,
        );
        if (summary.created + summary.updated > 0) await notifyEvents(producers);
        logger.info(summary, "settlement run done");
        return summary;
      },
    },
    // One run at a time per process: a run is a sequence of heavy aggregates, not I/O waits.
    { ...ctx, concurrency: 1 },
  );
};

/**
 * The moment the run stands for: a scheduled job carries its slot (`prevMillis`), so a run that
 * starts late (workers down past midnight) still settles the day before its slot, not before now.
 */
function scheduledAt(job: Job): Date {
  return new Date(job.opts.prevMillis ?? job.timestamp);
}
