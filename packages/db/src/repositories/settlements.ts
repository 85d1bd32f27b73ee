import {
  applySettlementAction,
  type Environment,
  ErrorCode,
  isOpenSettlementStatus,
  newId,
  presentSettlementFigures,
  reissueSettlementStatus,
  ServiceError,
  type SettlementAction,
  utcDayBounds,
} from "@outcomes/core";
import { and, asc, count, desc, eq, lt, or, sql } from "drizzle-orm";
import type { Database, Executor, Transaction } from "../client.js";
import { games } from "../schema/games.js";
import { partners } from "../schema/partners.js";
import { settlementReports } from "../schema/settlement-reports.js";
import { spinVoids } from "../schema/spin-voids.js";
import { spins } from "../schema/spins.js";
import { insertEvent } from "./events.js";
import type { Paged, PageWindow } from "./paging.js";
import {
  computeReportFigures,
  type FigureSource,
  figuresOf,
  type ReportFigures,
  type ReportKey,
  type SettlementReportRecord,
  sameFigures,
} from "./settlement-figures.js";

export * from "./settlement-figures.js";
export * from "./spin-rollups.js";

/**
 * What a run does to a report that was already acknowledged or disputed: the operator's explicit
 * generate is refused (409 KS-4304); the scheduled run leaves it alone and reports it skipped.
 */
export type SettledPolicy = "refuse" | "skip";

/** created / updated (figures replaced) / unchanged (same figures, nothing written) / skipped (settled). */
export type GenerationOutcome = "created" | "updated" | "unchanged" | "skipped";

export interface GenerationResult {
  report: SettlementReportRecord;
  outcome: GenerationOutcome;
}

/**
 * Builds or refreshes one report and, in the same transaction, writes `settlement.report_ready`
 * whenever the report is created or its figures change. Two runs at once yield one report and one
 * event: the unique (partner, environment, date) index lets one insert win, and the other then
 * takes the row lock, finds the same figures and writes nothing.
 */
export async function generateSettlementReport(
  db: Database,
  key: ReportKey,
  settled: SettledPolicy,
): Promise<GenerationResult> {
  // Refuse before the aggregate when we already know the answer; re-checked under the lock below.
  const current = await findSettlementReport(db, key);
  if (current && !isOpenSettlementStatus(current.status)) return settledResult(current, settled);

  return db.transaction(async (tx) => {
    const figures = await aggregate(tx, key, "rollups");
    const now = new Date();
    const [inserted] = await tx
      .insert(settlementReports)
      .values({ id: newId("stl"), ...key, status: "GENERATED", ...figures, generatedAt: now })
      .onConflictDoNothing({
        target: [settlementReports.partnerId, settlementReports.environment, settlementReports.reportDate],
      })
      .returning();
    if (inserted) {
      await announce(tx, inserted, now);
      return { report: inserted, outcome: "created" };
    }
    const existing = await lockReport(tx, key);
    if (!existing) throw new Error("settlement report vanished under its unique key");
    if (!isOpenSettlementStatus(existing.status)) return settledResult(existing, settled);
    if (sameFigures(figuresOf(existing), figures)) return { report: existing, outcome: "unchanged" };
    const updated = await updateReport(tx, existing, { ...figures, generatedAt: now });
    await announce(tx, updated, now);
    return { report: updated, outcome: "updated" };
  });
}

/**
 * Operator reissue after a dispute: recomputes the figures from the spins themselves (not the
 * roll-ups: a dispute is the moment to go back to the record) and makes the report PENDING (the
 * last dispute's reason and time stay on it as the record of what the reissue answered).
 */
export async function reissueSettlementReport(db: Database, key: ReportKey): Promise<SettlementReportRecord> {
  return db.transaction(async (tx) => {
    const existing = await lockReport(tx, key);
    if (!existing) throw new ServiceError(ErrorCode.ReportNotFound);
    const status = reissueSettlementStatus(existing.status);
    const figures = await aggregate(tx, key, "spins");
    const now = new Date();
    const updated = await updateReport(tx, existing, { ...figures, status, generatedAt: now });
    await announce(tx, updated, now);
    return updated;
  });
}

/**
 * Acknowledge or dispute under the row lock, so an acknowledge and a dispute racing each other
 * cannot both win: the second sees the first one's status and gets the table's error.
 */
export async function transitionSettlementReport(
  db: Database,
  key: ReportKey,
  action: SettlementAction,
): Promise<SettlementReportRecord> {
  return db.transaction(async (tx) => {
    const existing = await lockReport(tx, key);
    if (!existing) throw new ServiceError(ErrorCode.ReportNotFound);
    const next = applySettlementAction(existing.status, action);
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
      message: `The settlement report of ${report.reportDate} is ${report.status}; a run never changes it`,
    });
  }
  return { report, outcome: "skipped" };
}

/**
 * `data` of the `settlement.report_ready` event (CONTRACT §7): the report's day, status and totals,
 * the day's voids among them (fields added to the contract's, so `netUsd` can be checked).
 */
function reportReadyData(report: SettlementReportRecord) {
  const { rtp: _rtp, ...totals } = presentSettlementFigures(figuresOf(report));
  return { reportDate: report.reportDate, status: report.status, ...totals };
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

/** KS-4214's test: does the partner have any game registered in this environment? */
export async function partnerHasGames(db: Executor, partnerId: string, environment: Environment): Promise<boolean> {
  const [row] = await db
    .select({ id: games.id })
    .from(games)
    .where(and(eq(games.partnerId, partnerId), eq(games.environment, environment)))
    .limit(1);
  return row !== undefined;
}

/**
 * Who gets a report for a day: every partner and environment with a game registered before the day
 * ended. A deactivated partner still gets one for a day it had spins or voids on (the money must
 * settle), but not an empty one every day for ever.
 */
export async function settlementCandidates(
  db: Executor,
  reportDate: string,
  filter: { partnerId?: string | undefined; environment?: Environment | undefined } = {},
): Promise<Array<{ partnerId: string; environment: Environment }>> {
  const { start, end } = utcDayBounds(reportDate);
  const hadActivity = sql`(exists (select 1 from ${spins} where ${spins.partnerId} = ${games.partnerId}
    and ${spins.environment} = ${games.environment}
    and ${spins.createdAt} >= ${start.toISOString()}::timestamptz
    and ${spins.createdAt} < ${end.toISOString()}::timestamptz)
    or exists (select 1 from ${spinVoids} where ${spinVoids.partnerId} = ${games.partnerId}
    and ${spinVoids.environment} = ${games.environment}
    and ${spinVoids.voidedAt} >= ${start.toISOString()}::timestamptz
    and ${spinVoids.voidedAt} < ${end.toISOString()}::timestamptz))`;
  return db
    .selectDistinct({ partnerId: games.partnerId, environment: games.environment })
    .from(games)
    .innerJoin(partners, eq(partners.id, games.partnerId))
    .where(
      and(
        lt(games.createdAt, end),
        filter.partnerId ? eq(games.partnerId, filter.partnerId) : undefined,
        filter.environment ? eq(games.environment, filter.environment) : undefined,
        or(eq(partners.isActive, true), hadActivity),
      ),
    )
    .orderBy(asc(games.partnerId), asc(games.environment));
}
