import { isProvisionalReport, previousUtcDay } from "@outcomes/core";
import {
  type Database,
  type GenerationOutcome,
  generateSettlementReport,
  overdueProvisionalReports,
  type SettlementClock,
  settlementCandidates,
} from "@outcomes/db";
import type { JobPayload } from "@outcomes/queue";
import type { Logger } from "@outcomes/runtime";

export interface SettlementRunProgress {
  reportDate: string;
  total: number;
  done: number;
  created: number;
  updated: number;
  unchanged: number;
  skipped: number;
  failed: number;
}

export interface SettlementRunHooks {
  /** Called after each report (BullMQ `updateProgress`), so operators watch the run advance. */
  progress: (progress: SettlementRunProgress) => Promise<void>;
  /** One line per notable step (BullMQ `job.log`). */
  log: (line: string) => Promise<void>;
}

/**
 * One `settlement.generate` run: the day's report for every candidate partner and environment
 * (narrowed by the payload), each in its own transaction, then every report of an earlier day
 * still provisional (`overdueProvisionalReports`), which the run makes final. Final acknowledged
 * and disputed reports are skipped. A failed report does not stop the others; the run then throws
 * so BullMQ retries it, and the retry only redoes what is missing (unchanged reports write
 * nothing). A report of a day that has ended but that stays provisional (a transaction begun
 * before the day's end is still open) counts as failed, so the retry makes it final.
 */
export async function runSettlements(
  db: Database,
  payload: JobPayload<"settlement.generate">,
  scheduledAt: Date,
  hooks: SettlementRunHooks,
  logger: Logger,
  clock: SettlementClock = {},
): Promise<SettlementRunProgress> {
  const reportDate = payload.reportDate ?? previousUtcDay(scheduledAt);
  const filter = { partnerId: payload.partnerId, environment: payload.environment };
  const candidates = await settlementCandidates(db, reportDate, filter);
  const today = (clock.now ?? new Date()).toISOString().slice(0, 10);
  const overdue = await overdueProvisionalReports(db, today, reportDate, filter);
  const keys = [...candidates.map((candidate) => ({ ...candidate, reportDate })), ...overdue];
  const progress: SettlementRunProgress = {
    reportDate,
    total: keys.length,
    done: 0,
    created: 0,
    updated: 0,
    unchanged: 0,
    skipped: 0,
    failed: 0,
  };
  await hooks.log(
    `settling ${reportDate}: ${candidates.length} partner environment(s), ${overdue.length} provisional report(s) of earlier days`,
  );
  await hooks.progress(progress);

  for (const key of keys) {
    const name = `${key.partnerId}/${key.environment}${key.reportDate === reportDate ? "" : ` ${key.reportDate}`}`;
    try {
      const started = performance.now();
      const { outcome, report, dayEnded } = await generateSettlementReport(db, key, "skip", clock);
      if (dayEnded && isProvisionalReport(report)) {
        throw new Error("still provisional: a transaction begun before the day's end is open");
      }
      progress[outcome satisfies GenerationOutcome] += 1;
      const ms = Math.round(performance.now() - started);
      logger.info({ ...key, outcome, ms }, "settlement report");
      if (outcome !== "unchanged") await hooks.log(`${name}: ${outcome}`);
    } catch (error) {
      progress.failed += 1;
      logger.error({ err: error, ...key }, "settlement report failed");
      await hooks.log(`${name}: failed (${(error as Error).message})`);
    }
    progress.done += 1;
    await hooks.progress(progress);
  }
  if (progress.failed > 0) {
    throw new Error(`${progress.failed} of ${progress.total} settlement report(s) failed (settling ${reportDate})`);
  }
  return progress;
}
