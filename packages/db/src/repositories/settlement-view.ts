import {
  presentSettlementFigures,
  type SettlementFigures,
  type SettlementFiguresView,
  type SettlementStatus,
} from "@outcomes/core";
import type { settlementReports } from "../schema/settlement-reports.js";
import type { GameFigures, ReportFigures } from "./settlement-figures.js";

export type SettlementReportRecord = typeof settlementReports.$inferSelect;

/** Same figures, game by game: a run that finds them unchanged leaves the report (and events) alone. */
export function sameFigures(a: ReportFigures, b: ReportFigures): boolean {
  const key = (figures: SettlementFigures) =>
    `${figures.totalSpins}/${figures.totalWageredMicros}/${figures.totalPaidMicros}`;
  if (key(a) !== key(b) || a.games.length !== b.games.length) return false;
  return a.games.every((game, i) => {
    const other = b.games[i];
    return other !== undefined && other.gameId === game.gameId && key(other) === key(game);
  });
}

export function figuresOf(record: SettlementReportRecord): ReportFigures {
  return {
    totalSpins: record.totalSpins,
    totalWageredMicros: record.totalWageredMicros,
    totalPaidMicros: record.totalPaidMicros,
    games: record.games as GameFigures[],
  };
}

/** The report as the API shows it (CONTRACT §8). */
export interface SettlementReportView extends SettlementFiguresView {
  reportDate: string;
  status: SettlementStatus;
  games: Array<{ gameId: number } & SettlementFiguresView>;
  generatedAt: string;
  acknowledgedAt: string | null;
  disputedAt: string | null;
  disputeReason: string | null;
}

export function presentSettlementReport(record: SettlementReportRecord): SettlementReportView {
  const figures = figuresOf(record);
  return {
    reportDate: record.reportDate,
    status: record.status,
    ...presentSettlementFigures(figures),
    games: figures.games.map((game) => ({ gameId: game.gameId, ...presentSettlementFigures(game) })),
    generatedAt: record.generatedAt.toISOString(),
    acknowledgedAt: record.acknowledgedAt?.toISOString() ?? null,
    disputedAt: record.disputedAt?.toISOString() ?? null,
    disputeReason: record.disputeReason,
  };
}

/** `data` of the `settlement.report_ready` event (CONTRACT §7). */
export function reportReadyData(record: SettlementReportRecord) {
  const view = presentSettlementReport(record);
  return {
    reportDate: view.reportDate,
    status: view.status,
    totalSpins: view.totalSpins,
    totalWageredUsd: view.totalWageredUsd,
    totalPaidUsd: view.totalPaidUsd,
    netUsd: view.netUsd,
  };
}
