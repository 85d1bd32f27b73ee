import { ERROR_MESSAGES, ErrorCode, ServiceError } from "./errors.js";
import { formatScaledDecimal, MAX_EXACT_MICROS, microsToUsd, showsExactly } from "./money.js";

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
 * acknowledged report is KS-4302 whether or not a reason came with it. Then a provisional report
 * (`provisionalUntil`: its day's end) is 409 KS-4305 (CONTRACT §8), before the reason is read.
 */
export function applySettlementAction(
  status: SettlementStatus,
  action: SettlementAction,
  provisionalUntil: Date | null = null,
): SettlementTransition {
  if (status === "acknowledged") throw new ServiceError(ErrorCode.ReportAcknowledged);
  if (status === "disputed" && action.type === "dispute") throw new ServiceError(ErrorCode.ReportDisputed);
  // Acknowledging a disputed report (the table leaves it open): the catch-all row, KS-4304.
  if (!isOpenSettlementStatus(status)) throw new ServiceError(ErrorCode.ReportStatusConflict);
  if (provisionalUntil) {
    throw new ServiceError(ErrorCode.ReportProvisional, {
      message:
        `${ERROR_MESSAGES[ErrorCode.ReportProvisional]} at ${provisionalUntil.toISOString()}; ` +
        "the first settlement run after that makes it final",
    });
  }
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

/**
 * Whether a report is provisional (CONTRACT §8): its figures may still miss spins of its day. A run
 * stores what it found (`provisional`); a report stored by release 2 has no answer (null) and is
 * provisional when its figures were computed before its day ended.
 */
export function isProvisionalReport(report: {
  reportDate: string;
  generatedAt: Date;
  provisional: boolean | null;
}): boolean {
  return report.provisional ?? report.generatedAt < utcDayBounds(report.reportDate).end;
}

/** Exact figures: counts, and amounts in micro-USD as summed in SQL (BigInt: a day may pass 2^53). */
export interface SettlementFigures {
  /** The spins created that UTC day (voided or not). */
  totalSpins: number;
  totalWageredMicros: bigint;
  totalPaidMicros: bigint;
  /** The voids made that UTC day, of spins of any day (CONTRACT §13). */
  voidedSpins: number;
  voidedWageredMicros: bigint;
  voidedPaidMicros: bigint;
  /**
   * The free-round spins created that UTC day (CONTRACT §14; in `totalSpins` and `totalPaidMicros`)
   * and their notional wagers, which the partner paid: `totalWageredMicros` leaves them out.
   */
  freeRoundSpins: number;
  freeRoundWagerMicros: bigint;
}

/** The amounts of a figure set: each shown as a JSON number and, in `exact`, as a decimal string. */
export const SETTLEMENT_AMOUNTS = [
  "totalWageredUsd",
  "totalPaidUsd",
  "voidedWageredUsd",
  "voidedPaidUsd",
  "freeRoundWagerUsd",
  "netUsd",
] as const;
export type SettlementAmount = (typeof SETTLEMENT_AMOUNTS)[number];

export interface SettlementFiguresView extends Record<SettlementAmount, number> {
  totalSpins: number;
  voidedSpins: number;
  freeRoundSpins: number;
  rtp: number | null;
  /** Every amount as an exact decimal string of USD (`"9007199259.74"`, `"-0.5"`). */
  exact: Record<SettlementAmount, string>;
  /**
   * False when the JSON number of an amount does not read back as it exactly (past 2^53 − 1 micro-USD,
   * or a 16-digit amount just below): it is then the nearest double, and `exact` holds the amount.
   */
  figuresExact: boolean;
}

/**
 * Figures as the API shows them. `netUsd` is what the partner keeps after the day's voids
 * (`(wagered − voidedWagered) − (paid − voidedPaid)`), subtracted in integers before conversion.
 * Every amount is a JSON number (the nearest double: exact up to about 9 billion USD; past it
 * `figuresExact` is false) and an exact decimal string in `exact`, whatever its size.
 */
export function presentSettlementFigures(figures: SettlementFigures): SettlementFiguresView {
  const { totalSpins, voidedSpins, freeRoundSpins, totalWageredMicros, totalPaidMicros } = figures;
  const amounts: Record<SettlementAmount, bigint> = {
    totalWageredUsd: totalWageredMicros,
    totalPaidUsd: totalPaidMicros,
    voidedWageredUsd: figures.voidedWageredMicros,
    voidedPaidUsd: figures.voidedPaidMicros,
    freeRoundWagerUsd: figures.freeRoundWagerMicros,
    netUsd: totalWageredMicros - figures.voidedWageredMicros - (totalPaidMicros - figures.voidedPaidMicros),
  };
  const usd = (amount: SettlementAmount) => microsToUsd(amounts[amount]);
  return {
    totalSpins,
    totalWageredUsd: usd("totalWageredUsd"),
    totalPaidUsd: usd("totalPaidUsd"),
    voidedSpins,
    voidedWageredUsd: usd("voidedWageredUsd"),
    voidedPaidUsd: usd("voidedPaidUsd"),
    freeRoundSpins,
    freeRoundWagerUsd: usd("freeRoundWagerUsd"),
    netUsd: usd("netUsd"),
    rtp: returnToPlayer(totalPaidMicros, totalWageredMicros),
    exact: Object.fromEntries(
      SETTLEMENT_AMOUNTS.map((amount) => [amount, formatScaledDecimal(amounts[amount])]),
    ) as Record<SettlementAmount, string>,
    figuresExact: SETTLEMENT_AMOUNTS.every((amount) => showsExactly(amounts[amount])),
  };
}

/**
 * Paid ÷ wagered of the day's spins as the nearest double, `null` when nothing was wagered. Within
 * 2^53 both are exact doubles, so the one division is the only rounding (a client dividing the two
 * numbers gets the same); past it the quotient is first taken exactly to 20 significant digits.
 */
function returnToPlayer(paid: bigint, wagered: bigint): number | null {
  if (wagered === 0n) return null;
  if (paid <= MAX_EXACT_MICROS && wagered <= MAX_EXACT_MICROS) return Number(paid) / Number(wagered);
  const scale = 20 + Math.max(0, wagered.toString().length - paid.toString().length);
  return Number(formatScaledDecimal((paid * 10n ** BigInt(scale)) / wagered, scale));
}
