import {
  type Environment,
  presentSettlementFigures,
  type SettlementFigures,
  type SettlementFiguresView,
  type SettlementStatus,
  utcDayBounds,
} from "@outcomes/core";
import { and, asc, eq, lt, sql } from "drizzle-orm";
import type { Executor } from "../client.js";
import { games } from "../schema/games.js";
import type { settlementReports } from "../schema/settlement-reports.js";
import { spins } from "../schema/spins.js";

/** One report's identity: the unique key of `settlement_reports`. */
export interface ReportKey {
  partnerId: string;
  environment: Environment;
  /** `YYYY-MM-DD`, a UTC day. */
  reportDate: string;
}

/** Per-game figures as stored in the report's `games` column. */
export interface GameFigures extends SettlementFigures {
  gameId: number;
}

export interface ReportFigures extends SettlementFigures {
  games: GameFigures[];
}

/**
 * The figures of one partner's UTC day, exact: Postgres sums the bigint micro-USD columns (as
 * numeric, never float) per game over the covering index `spins_settlement_idx`, and the totals
 * are the BigInt sum of those. Every game registered before the day ended is listed, with zeros
 * when it had no spins, so a statement shows the partner's whole catalogue.
 */
export async function computeReportFigures(executor: Executor, key: ReportKey): Promise<ReportFigures> {
  const { end } = utcDayBounds(key.reportDate);
  const perGame = await spinTotalsByGame(executor, key);
  const registered = await executor
    .select({ gameId: games.id })
    .from(games)
    .where(and(eq(games.partnerId, key.partnerId), eq(games.environment, key.environment), lt(games.createdAt, end)))
    .orderBy(asc(games.id));

  const byGame = new Map<number, GameFigures>();
  for (const { gameId } of registered) byGame.set(gameId, zeroFigures(gameId));
  for (const row of perGame) {
    byGame.set(row.gameId, {
      gameId: row.gameId,
      totalSpins: safeInteger(row.spins),
      totalWageredMicros: safeInteger(row.wagered),
      totalPaidMicros: safeInteger(row.paid),
    });
  }
  const gameFigures = [...byGame.values()].sort((a, b) => a.gameId - b.gameId);
  const sum = (pick: (game: GameFigures) => number) =>
    safeInteger(gameFigures.reduce((total, game) => total + BigInt(pick(game)), 0n).toString());
  return {
    totalSpins: sum((game) => game.totalSpins),
    totalWageredMicros: sum((game) => game.totalWageredMicros),
    totalPaidMicros: sum((game) => game.totalPaidMicros),
    games: gameFigures,
  };
}

/**
 * The one heavy query: spins of the day per game. Exported so the benchmark can EXPLAIN the very
 * statement the service runs.
 */
export function spinTotalsByGame(executor: Executor, key: ReportKey) {
  const { start, end } = utcDayBounds(key.reportDate);
  return executor
    .select({
      gameId: spins.gameId,
      spins: sql<string>`count(*)::text`,
      wagered: sql<string>`sum(${spins.wagerMicros})::text`,
      paid: sql<string>`sum(${spins.payoutMicros})::text`,
    })
    .from(spins)
    .where(
      and(
        eq(spins.partnerId, key.partnerId),
        eq(spins.environment, key.environment),
        sql`${spins.createdAt} >= ${start.toISOString()}::timestamptz`,
        sql`${spins.createdAt} < ${end.toISOString()}::timestamptz`,
      ),
    )
    .groupBy(spins.gameId);
}

function zeroFigures(gameId: number): GameFigures {
  return { gameId, totalSpins: 0, totalWageredMicros: 0, totalPaidMicros: 0 };
}

/** Sums arrive as decimal text; beyond 2^53 micro-USD (~9 billion USD a day) a number is not exact. */
function safeInteger(text: string): number {
  const value = BigInt(text);
  if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw new RangeError(`settlement figure out of range: ${text}`);
  return Number(value);
}

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

export type SettlementReportRecord = typeof settlementReports.$inferSelect;

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
