import {
  applySettlementAction,
  ErrorCode,
  isOpenSettlementStatus,
  isProvisionalReport,
  newId,
  presentSettlementFigures,
  reissueSettlementStatus,
  ServiceError,
  type SettlementAction,
  utcDayBounds,
} from "@outcomes/core";
import { and, count, desc, eq, sql } from "drizzle-orm";
import type { Database, Executor, Transaction } from "../client.js";
import { settlementReports } from "../schema/settlement-reports.js";
import { insertEvent } from "./events.js";
import type { Paged, PageWindow } from "./paging.js";
import { settlementDayState } from "./settlement-day.js";
import {
  computeReportFigures,
  type FigureSource,
  figuresOf,
  type ReportFigures,
  type ReportKey,
  type SettlementReportRecord,
  sameFigures,
  storedGames,
} from "./settlement-figures.js";
import { refusedSpinsOf, sameCounts } from "./spin-refusals.js";

export * from "./settlement-candidates.js";
export * from "./settlement-day.js";
export * from "./settlement-figures.js";
export * from "./spin-rollups.js";

/**
 * What a run does to a settled report (acknowledged or disputed, and final): the operator's
 * explicit generate is refused (409 KS-4304); the scheduled run leaves it alone and reports it skipped.
 */
export type SettledPolicy = "refuse" | "skip";

/** created / updated (figures replaced, or made final) / unchanged (nothing written) / skipped (settled). */
export type GenerationOutcome = "created" | "updated" | "unchanged" | "skipped";

export interface GenerationResult {
  report: SettlementReportRecord;
  outcome: GenerationOutcome;
  /** The report's day had ended when the run looked: a report still provisional then waits for a transaction. */
  dayEnded: boolean;
}

export interface SettlementClock {
  /** The moment a test sets; the database's clock otherwise. */
  now?: Date;
}

/** Acknowledged or disputed, and final: no run changes it again (CONTRACT §8). */
function isSettled(report: SettlementReportRecord): boolean {
  return !isOpenSettlementStatus(report.status) && !isProvisionalReport(report);
}

/**
 * Builds or refreshes one report and, in the same transaction, writes `settlement.report_ready`
 * whenever the report is created, its figures change or it becomes final. Two runs at once yield one
 * report and one event: the unique (partner, environment, date) index lets one insert win, and the
 * other then takes the row lock, finds the same figures and writes nothing.
 *
 * A report is provisional until a run after its day has ended sums it with nothing of the day still
 * uncommitted (`settlementDayState`); that run makes it final, whatever its status. A provisional
 * report may have been acknowledged or disputed by release 2 (or before `release finish`): an
 * acknowledgement or dispute holds the figures it was given, so when they change the report is
 * GENERATED again (`acknowledgedAt` cleared; a dispute's reason and time stay as its record).
 */
export async function generateSettlementReport(
  db: Database,
  key: ReportKey,
  settled: SettledPolicy,
  clock: SettlementClock = {},
): Promise<GenerationResult> {
  // Refuse before the aggregate when we already know the answer; re-checked under the lock below.
  const current = await findSettlementReport(db, key);
  if (current && isSettled(current)) return settledResult(current, settled);

  return db.transaction(async (tx) => {
    const day = await settlementDayState(tx, key.reportDate, clock.now);
    const figures = await aggregate(tx, key, "rollups");
    const refusedSpins = await refusedSpinsOf(tx, key, key.reportDate);
    const stored = { ...figures, games: storedGames(figures.games), refusedSpins, generatedAt: day.now };
    const [inserted] = await tx
      .insert(settlementReports)
      .values({ id: newId("stl"), ...key, status: "GENERATED", ...stored, provisional: !day.complete })
      .onConflictDoNothing({
        target: [settlementReports.partnerId, settlementReports.environment, settlementReports.reportDate],
      })
      .returning();
    if (inserted) {
      await announce(tx, inserted, day.now);
      return { report: inserted, outcome: "created", dayEnded: day.ended };
    }
    const existing = await lockReport(tx, key);
    if (!existing) throw new Error("settlement report vanished under its unique key");
    if (isSettled(existing)) return settledResult(existing, settled);
    const wasProvisional = isProvisionalReport(existing);
    // A final report stays final: every spin of its day was in it.
    const provisional = wasProvisional && !day.complete;
    const changed =
      !sameFigures(figuresOf(existing), figures) || !sameCounts(existing.refusedSpins ?? {}, refusedSpins);
    if (!changed && provisional === wasProvisional) {
      return { report: existing, outcome: "unchanged", dayEnded: day.ended };
    }
    const reopened = changed && !isOpenSettlementStatus(existing.status);
    const updated = await updateReport(tx, existing, {
      ...stored,
      provisional,
      ...(reopened ? { status: "GENERATED" as const, acknowledgedAt: null } : {}),
    });
    await announce(tx, updated, day.now);
    return { report: updated, outcome: "updated", dayEnded: day.ended };
  });
}

/**
 * Operator reissue after a dispute: recomputes the figures from the spins themselves (not the
 * roll-ups: a dispute is the moment to go back to the record) and makes the report PENDING (the
 * last dispute's reason and time stay on it as the record of what the reissue answered).
 */
export async function reissueSettlementReport(
  db: Database,
  key: ReportKey,
  clock: SettlementClock = {},
): Promise<SettlementReportRecord> {
  return db.transaction(async (tx) => {
    const existing = await lockReport(tx, key);
    if (!existing) throw new ServiceError(ErrorCode.ReportNotFound);
    const status = reissueSettlementStatus(existing.status);
    const day = await settlementDayState(tx, key.reportDate, clock.now);
    const figures = await aggregate(tx, key, "spins");
    const updated = await updateReport(tx, existing, {
      ...figures,
      games: storedGames(figures.games),
      refusedSpins: await refusedSpinsOf(tx, key, key.reportDate),
      status,
      provisional: isProvisionalReport(existing) && !day.complete,
      generatedAt: day.now,
    });
    await announce(tx, updated, day.now);
    return updated;
  });
}

/**
 * Acknowledge or dispute under the row lock, so an acknowledge and a dispute racing each other
 * cannot both win: the second sees the first one's status and gets the table's error. A
 * provisional report is 409 KS-4305 (`refuseProvisional`: off until release 2 runs nowhere, as it
 * accepts both; the run after the day ends then makes such a report final).
 */
export async function transitionSettlementReport(
  db: Database,
  key: ReportKey,
  action: SettlementAction,
  options: { refuseProvisional: boolean } = { refuseProvisional: true },
): Promise<SettlementReportRecord> {
  return db.transaction(async (tx) => {
    const existing = await lockReport(tx, key);
    if (!existing) throw new ServiceError(ErrorCode.ReportNotFound);
    const provisionalUntil =
      options.refuseProvisional && isProvisionalReport(existing) ? utcDayBounds(key.reportDate).end : null;
    const next = applySettlementAction(existing.status, action, provisionalUntil);
    const now = new Date();
    return updateReport(
      tx,
      existing,
      next.status === "acknowledged"
        ? { status: next.status, acknowledgedAt: now }
        : { status: next.status, disputedAt: now, disputeReason: next.disputeReason },
    );
  });
}

/** The report or 404 KS-4301 (another environment's report does not exist for this caller). */
export async function requireSettlementReport(db: Executor, key: ReportKey): Promise<SettlementReportRecord> {
  const report = await findSettlementReport(db, key);
  if (!report) throw new ServiceError(ErrorCode.ReportNotFound);
  return report;
}

/** Newest report date first. */
export async function listSettlementReports(
  db: Database,
  owner: { partnerId: string; environment: ReportKey["environment"] },
  page: PageWindow,
): Promise<Paged<SettlementReportRecord>> {
  const where = and(
    eq(settlementReports.partnerId, owner.partnerId),
    eq(settlementReports.environment, owner.environment),
  );
  const [rows, totals] = await Promise.all([
    db
      .select()
      .from(settlementReports)
      .where(where)
      .orderBy(desc(settlementReports.reportDate))
      .limit(page.limit)
      .offset(page.offset),
    db.select({ total: count() }).from(settlementReports).where(where),
  ]);
  return { rows, total: totals[0]?.total ?? 0 };
}

async function findSettlementReport(db: Executor, key: ReportKey): Promise<SettlementReportRecord | undefined> {
  const [report] = await db.select().from(settlementReports).where(whereKey(key));
  return report;
}

async function lockReport(tx: Transaction, key: ReportKey): Promise<SettlementReportRecord | undefined> {
  const [report] = await tx.select().from(settlementReports).where(whereKey(key)).for("update");
  return report;
}

function whereKey(key: ReportKey) {
  return and(
    eq(settlementReports.partnerId, key.partnerId),
    eq(settlementReports.environment, key.environment),
    eq(settlementReports.reportDate, key.reportDate),
  );
}

/**
 * Session settings of the aggregate (docs/settlements.md, "Scale"). JIT compilation costs Postgres
 * ~0.5 s here, about half the run time at 10M spins, and buys nothing on a plan this simple. A
 * generic plan of the prepared statement guesses a tiny day (unknown bounds) and drops the
 * parallel workers, so each run is planned for its own partner and day.
 */
async function aggregate(tx: Transaction, key: ReportKey, source: FigureSource): Promise<ReportFigures> {
  await tx.execute(sql`set local jit = off`);
  await tx.execute(sql`set local plan_cache_mode = force_custom_plan`);
  return computeReportFigures(tx, key, source);
}

async function updateReport(
  tx: Transaction,
  existing: SettlementReportRecord,
  changes: Partial<typeof settlementReports.$inferInsert>,
): Promise<SettlementReportRecord> {
  const [updated] = await tx
    .update(settlementReports)
    .set(changes)
    .where(eq(settlementReports.id, existing.id))
    .returning();
  return updated!;
}

function settledResult(report: SettlementReportRecord, settled: SettledPolicy): GenerationResult {
  if (settled === "refuse") {
    throw new ServiceError(ErrorCode.ReportStatusConflict, {
      message: `The settlement report of ${report.reportDate} is ${report.status} and final; a run never changes it`,
    });
  }
  // A final report: its day has ended.
  return { report, outcome: "skipped", dayEnded: true };
}

/**
 * `data` of the `settlement.report_ready` event (CONTRACT §7): the report's day, status and totals,
 * the day's voids among them (fields added to the contract's, so `netUsd` can be checked), the
 * exact amounts with `figuresExact`, and `provisional` (a final report can be acknowledged).
 */
function reportReadyData(report: SettlementReportRecord) {
  const { rtp: _rtp, ...totals } = presentSettlementFigures(figuresOf(report));
  return { reportDate: report.reportDate, status: report.status, provisional: isProvisionalReport(report), ...totals };
}

async function announce(tx: Transaction, report: SettlementReportRecord, now: Date): Promise<void> {
  await insertEvent(tx, {
    partnerId: report.partnerId,
    environment: report.environment,
    type: "settlement.report_ready",
    data: reportReadyData(report),
    now,
  });
}
