import { type Environment, type SettlementFigures, utcDayBounds } from "@outcomes/core";
import { and, asc, eq, lt, sql } from "drizzle-orm";
import type { Executor } from "../client.js";
import { games } from "../schema/games.js";
import type { settlementReports } from "../schema/settlement-reports.js";
import { spinHourlyTotals } from "../schema/spin-rollups.js";
import { spins } from "../schema/spins.js";
import { rollupCoverage } from "./spin-rollups.js";

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

export type SettlementReportRecord = typeof settlementReports.$inferSelect;

export function figuresOf(record: SettlementReportRecord): ReportFigures {
  return {
    totalSpins: record.totalSpins,
    totalWageredMicros: record.totalWageredMicros,
    totalPaidMicros: record.totalPaidMicros,
    games: record.games as GameFigures[],
  };
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

/** Where a day's figures come from: the sealed roll-ups where they cover it, or the spins themselves. */
export type FigureSource = "rollups" | "spins";

export interface TimeRange {
  from: Date;
  to: Date;
}

interface PerGameRow {
  gameId: number;
  spins: string;
  wagered: string;
  paid: string;
}

/**
 * The figures of one partner's UTC day, exact: Postgres sums the bigint micro-USD columns (as
 * numeric, never float) per game, from the sealed hourly roll-ups where they cover the day and from
 * `spins` (index-only over `spins_settlement_idx`) for the rest; totals are BigInt sums of the
 * per-game rows. Every game registered before the day ended is listed, with zeros when it had no
 * spins, so a statement shows the partner's whole catalogue.
 */
export async function computeReportFigures(
  executor: Executor,
  key: ReportKey,
  source: FigureSource = "rollups",
): Promise<ReportFigures> {
  const { start, end } = utcDayBounds(key.reportDate);
  const day = { from: start, to: end };
  const coverage = source === "rollups" ? await rollupCoverage(executor) : null;
  const rolled = coverage ? intersect(day, { from: coverage.coveredFrom, to: coverage.sealedUntil }) : null;
  const rows: PerGameRow[] = [];
  if (rolled) {
    rows.push(...(await rollupTotalsByGame(executor, key, rolled)));
    if (day.from < rolled.from) rows.push(...(await spinTotalsByGame(executor, key, { ...day, to: rolled.from })));
    if (rolled.to < day.to) rows.push(...(await spinTotalsByGame(executor, key, { ...day, from: rolled.to })));
  } else {
    rows.push(...(await spinTotalsByGame(executor, key, day)));
  }
  const registered = await executor
    .select({ gameId: games.id })
    .from(games)
    .where(and(eq(games.partnerId, key.partnerId), eq(games.environment, key.environment), lt(games.createdAt, end)))
    .orderBy(asc(games.id));

  const byGame = new Map<number, { spins: bigint; wagered: bigint; paid: bigint }>();
  for (const { gameId } of registered) byGame.set(gameId, { spins: 0n, wagered: 0n, paid: 0n });
  for (const row of rows) {
    const game = byGame.get(row.gameId) ?? { spins: 0n, wagered: 0n, paid: 0n };
    byGame.set(row.gameId, {
      spins: game.spins + BigInt(row.spins),
      wagered: game.wagered + BigInt(row.wagered),
      paid: game.paid + BigInt(row.paid),
    });
  }
  const perGame: GameFigures[] = [...byGame.entries()]
    .sort(([a], [b]) => a - b)
    .map(([gameId, game]) => ({
      gameId,
      totalSpins: safeInteger(game.spins),
      totalWageredMicros: safeInteger(game.wagered),
      totalPaidMicros: safeInteger(game.paid),
    }));
  const sum = (pick: (game: GameFigures) => number) =>
    safeInteger(perGame.reduce((total, game) => total + BigInt(pick(game)), 0n));
  return {
    totalSpins: sum((game) => game.totalSpins),
    totalWageredMicros: sum((game) => game.totalWageredMicros),
    totalPaidMicros: sum((game) => game.totalPaidMicros),
    games: perGame,
  };
}

function intersect(a: TimeRange, b: TimeRange): TimeRange | null {
  const from = new Date(Math.max(a.from.getTime(), b.from.getTime()));
  const to = new Date(Math.min(a.to.getTime(), b.to.getTime()));
  return from < to ? { from, to } : null;
}

/** Beyond 2^53 micro-USD (~9 billion USD a day) a JS number is not exact: refuse rather than round. */
function safeInteger(value: bigint): number {
  if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw new RangeError(`settlement figure out of range: ${value}`);
  return Number(value);
}

/**
 * Spins of a range per game: the heavy query of an unsealed range, one index-only range scan.
 * Exported so the benchmark can EXPLAIN the very statement the service runs.
 */
export function spinTotalsByGame(executor: Executor, key: ReportKey, range: TimeRange) {
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
        sql`${spins.createdAt} >= ${range.from.toISOString()}::timestamptz`,
        sql`${spins.createdAt} < ${range.to.toISOString()}::timestamptz`,
      ),
    )
    .groupBy(spins.gameId);
}

function rollupTotalsByGame(executor: Executor, key: ReportKey, range: TimeRange) {
  return executor
    .select({
      gameId: spinHourlyTotals.gameId,
      spins: sql<string>`sum(${spinHourlyTotals.totalSpins})::text`,
      wagered: sql<string>`sum(${spinHourlyTotals.totalWageredMicros})::text`,
      paid: sql<string>`sum(${spinHourlyTotals.totalPaidMicros})::text`,
    })
    .from(spinHourlyTotals)
    .where(
      and(
        eq(spinHourlyTotals.partnerId, key.partnerId),
        eq(spinHourlyTotals.environment, key.environment),
        sql`${spinHourlyTotals.hour} >= ${range.from.toISOString()}::timestamptz`,
        sql`${spinHourlyTotals.hour} < ${range.to.toISOString()}::timestamptz`,
      ),
    )
    .groupBy(spinHourlyTotals.gameId);
}
