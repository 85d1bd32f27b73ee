import { ErrorCode, ServiceError } from "./errors.js";
import { microsToUsd } from "./money.js";

/**
 * Settlement reports: one per partner, environment and UTC day. The state machine is the
 * specification's table; this module is pure so every cell is unit-tested without a database.
 */
export const SETTLEMENT_STATUSES = ["GENERATED", "PENDING", "acknowledged", "disputed"] as const;
export type SettlementStatus = (typeof SETTLEMENT_STATUSES)[number];

/** A dispute reason is free text; the cap keeps one report row from carrying a document. */
export const DISPUTE_REASON_MAX_LENGTH = 2000;

export type SettlementAction = { type: "acknowledge" } | { type: "dispute"; reason: unknown };

export type SettlementTransition =
  | { status: "acknowledged" }
  | {
      status: "disputed";
      disputeReason: string;
    };

/** Only GENERATED and PENDING reports can still change (by a run, an acknowledge or a dispute). */
export function isOpenSettlementStatus(status: SettlementStatus): boolean {
  return status === "GENERATED" || status === "PENDING";
}

/**
 * Applies acknowledge or dispute, or throws the table's error. The table's conditions say "any"
 * for the error rows, so the report's state is checked before the reason: disputing an
 * acknowledged report is KS-4302 whether or not a reason came with it.
 */
export function applySettlementAction(status: SettlementStatus, action: SettlementAction): SettlementTransition {
  if (status === "acknowledged") throw new ServiceError(ErrorCode.ReportAcknowledged);
  if (status === "disputed" && action.type === "dispute") throw new ServiceError(ErrorCode.ReportDisputed);
  // Acknowledging a disputed report (the table leaves it open): the catch-all row, KS-4304.
  if (!isOpenSettlementStatus(status)) throw new ServiceError(ErrorCode.ReportStatusConflict);
  if (action.type === "acknowledge") return { status: "acknowledged" };
  return { status: "disputed", disputeReason: disputeReason(action.reason) };
}

/** Operator reissue: only a disputed report is recomputed, and it becomes PENDING. */
export function reissueSettlementStatus(status: SettlementStatus): "PENDING" {
  if (status !== "disputed") {
    throw new ServiceError(ErrorCode.ReportStatusConflict, {
      message: "Only a disputed settlement report can be reissued",
    });
  }
  return "PENDING";
}

function disputeReason(reason: unknown): string {
  if (reason === undefined || reason === null || (typeof reason === "string" && reason.trim() === "")) {
    throw new ServiceError(ErrorCode.RequiredFieldMissing, {
      details: [{ path: "reason", message: "A dispute needs a reason" }],
    });
  }
  if (typeof reason !== "string") {
    throw new ServiceError(ErrorCode.InvalidRequest, { details: [{ path: "reason", message: "Expected a string" }] });
  }
  const trimmed = reason.trim();
  if (trimmed.length > DISPUTE_REASON_MAX_LENGTH) {
    throw new ServiceError(ErrorCode.InvalidRequest, {
      details: [{ path: "reason", message: `At most ${DISPUTE_REASON_MAX_LENGTH} characters` }],
    });
  }
  return trimmed;
}

const DATE_PATTERN = /^(\d{4})-(\d{2})-(\d{2})$/;

/** `YYYY-MM-DD` that names a real calendar day (no 2025-02-30, no year 0000); else null. */
export function parseReportDate(value: unknown): string | null {
  if (typeof value !== "string") return null;
  const match = DATE_PATTERN.exec(value);
  if (!match) return null;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  return value;
}

/** The report date or 400 KS-4105. */
export function requireReportDate(value: unknown, path = "reportDate"): string {
  const date = parseReportDate(value);
  if (date === null) {
    throw new ServiceError(ErrorCode.InvalidDate, {
      details: [{ path, message: "Expected a calendar date as YYYY-MM-DD (UTC day)" }],
    });
  }
  return date;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** The UTC day as a half-open interval: [day 00:00:00.000, next day 00:00:00.000). */
export function utcDayBounds(reportDate: string): { start: Date; end: Date } {
  const start = new Date(`${reportDate}T00:00:00.000Z`);
  if (Number.isNaN(start.getTime())) throw new RangeError(`not a report date: ${reportDate}`);
  return { start, end: new Date(start.getTime() + 24 * 3600 * 1000) };
}

/** `YYYY-MM-DD` of the UTC day an instant falls in. */
function utcDateOf(instant: Date): string {
  return instant.toISOString().slice(0, 10);
}

/** The UTC day before the one `now` falls in: what the daily run settles. */
export function previousUtcDay(now: Date): string {
  return utcDateOf(new Date(now.getTime() - 24 * 3600 * 1000));
}

/** A day that has not started yet has no spins to settle; generating it would freeze zeros. */
export function isFutureReportDate(reportDate: string, now: Date): boolean {
  return reportDate > utcDateOf(now);
}

/**
 * A report date an operator may settle now: a calendar day (else 400 KS-4105) that has begun in UTC
 * (a later one is KS-4105 too). The operator API's body guard and the CLI both check it here.
 */
export function requireSettleableReportDate(value: unknown, now: Date): string {
  const reportDate = requireReportDate(value);
  if (isFutureReportDate(reportDate, now)) {
    throw new ServiceError(ErrorCode.InvalidDate, {
      message: "reportDate has not begun yet (UTC): there is nothing to settle",
      details: [{ path: "reportDate", message: "A UTC day up to today" }],
    });
  }
  return reportDate;
}

/** Exact figures in micro-USD, as summed in SQL. */
export interface SettlementFigures {
  /** The spins created that UTC day (voided or not). */
  totalSpins: number;
  totalWageredMicros: number;
  totalPaidMicros: number;
  /** The voids made that UTC day, of spins of any day (CONTRACT §13). */
  voidedSpins: number;
  voidedWageredMicros: number;
  voidedPaidMicros: number;
  /**
   * The free-round spins created that UTC day (CONTRACT §14; in `totalSpins` and `totalPaidMicros`)
   * and their notional wagers, which the partner paid: `totalWageredMicros` leaves them out.
   */
  freeRoundSpins: number;
  freeRoundWagerMicros: number;
}

export interface SettlementFiguresView {
  totalSpins: number;
  totalWageredUsd: number;
  totalPaidUsd: number;
  voidedSpins: number;
  voidedWageredUsd: number;
  voidedPaidUsd: number;
  freeRoundSpins: number;
  freeRoundWagerUsd: number;
  netUsd: number;
  rtp: number | null;
}

/**
 * Figures as the API shows them. `netUsd` is what the partner keeps after the day's voids
 * (`(wagered − voidedWagered) − (paid − voidedPaid)`), subtracted in integers before conversion;
 * `rtp` is paid ÷ wagered of the day's spins as the nearest double (both are exact integers, so the
 * one division is the only rounding), `null` when nothing was wagered.
 */
export function presentSettlementFigures(figures: SettlementFigures): SettlementFiguresView {
  const { totalSpins, totalWageredMicros, totalPaidMicros, voidedSpins, voidedWageredMicros, voidedPaidMicros } =
    figures;
  const { freeRoundSpins, freeRoundWagerMicros } = figures;
  const kept = BigInt(totalWageredMicros) - BigInt(voidedWageredMicros);
  const paid = BigInt(totalPaidMicros) - BigInt(voidedPaidMicros);
  return {
    totalSpins,
    totalWageredUsd: microsToUsd(totalWageredMicros),
    totalPaidUsd: microsToUsd(totalPaidMicros),
    voidedSpins,
    voidedWageredUsd: microsToUsd(voidedWageredMicros),
    voidedPaidUsd: microsToUsd(voidedPaidMicros),
    freeRoundSpins,
    freeRoundWagerUsd: microsToUsd(freeRoundWagerMicros),
    netUsd: microsToUsd(kept - paid),
    rtp: totalWageredMicros === 0 ? null : totalPaidMicros / totalWageredMicros,
  };
}
