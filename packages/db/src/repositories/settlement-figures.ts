import { type Environment, isExactMicros, type SettlementFigures, utcDayBounds } from "@outcomes/core";
import { type AnyColumn, and, asc, eq, lt, type SQL, sql } from "drizzle-orm";
import type { Executor } from "../client.js";
import { freeRoundSpins } from "../schema/free-rounds.js";
import { games } from "../schema/games.js";
import type { settlementReports } from "../schema/settlement-reports.js";
import { spinHourlyTotals } from "../schema/spin-rollups.js";
import { spinVoids } from "../schema/spin-voids.js";
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

/** Every figure of a report, in the order the stored games list them. */
const FIGURES = [
  "totalSpins",
  "totalWageredMicros",
  "totalPaidMicros",
  "voidedSpins",
  "voidedWageredMicros",
  "voidedPaidMicros",
  "freeRoundSpins",
  "freeRoundWagerMicros",
] as const satisfies readonly (keyof SettlementFigures)[];
type Figure = (typeof FIGURES)[number];
const COUNTS = new Set<Figure>(["totalSpins", "voidedSpins", "freeRoundSpins"]);

/** Every figure, each valued by `value`. */
function eachFigure<T>(value: (figure: Figure) => T): Record<Figure, T> {
  const figures = {} as Record<Figure, T>;
  for (const figure of FIGURES) figures[figure] = value(figure);
  return figures;
}

/** Figures from exact integers: counts as numbers (never near 2^53), amounts as BigInt. */
function typedFigures(value: (figure: Figure) => bigint): SettlementFigures {
  return eachFigure((figure) => (COUNTS.has(figure) ? Number(value(figure)) : value(figure))) as SettlementFigures;
}

/** A stored per-game entry: amounts past 2^53 as decimal strings (JSON numbers would round), the rest as numbers. */
type StoredGame = { gameId: number } & Partial<Record<Figure, number | string>>;

/** Per-game figures as stored in the report's `games` column (numbers where exact, as release 2 reads them). */
export function storedGames(games: GameFigures[]): StoredGame[] {
  return games.map((game) => ({
    gameId: game.gameId,
    ...eachFigure((figure) => {
      const value = game[figure];
      return typeof value === "number" || isExactMicros(value) ? Number(value) : value.toString();
    }),
  }));
}

/** Reports stored before voids or free rounds existed have none of their figures: they were 0 then. */
export function figuresOf(record: SettlementReportRecord): ReportFigures {
  return {
    totalSpins: record.totalSpins,
    totalWageredMicros: record.totalWageredMicros,
    totalPaidMicros: record.totalPaidMicros,
    voidedSpins: record.voidedSpins,
    voidedWageredMicros: record.voidedWageredMicros,
    voidedPaidMicros: record.voidedPaidMicros,
    freeRoundSpins: record.freeRoundSpins,
    freeRoundWagerMicros: record.freeRoundWagerMicros,
    games: (record.games as StoredGame[]).map((game) => ({
      gameId: game.gameId,
      ...typedFigures((figure) => BigInt(game[figure] ?? 0)),
    })),
  };
}

/** Same figures, game by game: a run that finds them unchanged leaves the report (and events) alone. */
export function sameFigures(a: ReportFigures, b: ReportFigures): boolean {
  const key = (figures: SettlementFigures) => FIGURES.map((figure) => figures[figure]).join("/");
  if (key(a) !== key(b) || a.games.length !== b.games.length) return false;
  return a.games.every((game, i) => {
    const other = b.games[i];
    return other !== undefined && other.gameId === game.gameId && key(other) === key(game);
  });
}

/** Where a day's figures come from: the sealed roll-ups where they cover it, or the record itself (spins, voids). */
export type FigureSource = "rollups" | "spins";

export interface TimeRange {
  from: Date;
  to: Date;
}

/** Some figures of one game, summed in SQL as text (exact numeric). */
type PerGameRow = { gameId: number } & Partial<Record<Figure, string>>;

/**
 * The figures of one partner's UTC day, exact: Postgres sums the bigint micro-USD columns (as
 * numeric, never float) per game, from the sealed hourly roll-ups where they cover the day and from
 * `spins` (index-only over `spins_settlement_idx`), `spin_voids` (over `spin_voids_settlement_idx`)
 * and `free_round_spins` (over `free_round_spins_settlement_idx`) for the rest; totals are BigInt sums of the per-game rows. The spins are those created that day,
 * the voids those made that day (of spins of any day). Every game registered before the day ended
 * is listed, with zeros when it had neither, so a statement shows the partner's whole catalogue.
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
  // One statement, so spins, voids and free-round spins committing meanwhile are all seen or all not
  // (a free-round spin counted by one sum and not the other would take its wager off twice).
  const sumUnsealed = async (range: TimeRange) => {
    rows.push(
      ...(await spinTotalsByGame(executor, key, range)
        .unionAll(voidTotalsByGame(executor, key, range))
        .unionAll(freeRoundTotalsByGame(executor, key, range))),
    );
  };
  if (rolled) {
    rows.push(...(await rollupTotalsByGame(executor, key, rolled)));
    if (day.from < rolled.from) await sumUnsealed({ ...day, to: rolled.from });
    if (rolled.to < day.to) await sumUnsealed({ ...day, from: rolled.to });
  } else {
    await sumUnsealed(day);
  }
  const registered = await executor
    .select({ gameId: games.id })
    .from(games)
    .where(and(eq(games.partnerId, key.partnerId), eq(games.environment, key.environment), lt(games.createdAt, end)))
    .orderBy(asc(games.id));

  const zeros = () => eachFigure(() => 0n);
  const byGame = new Map<number, Record<Figure, bigint>>();
  for (const { gameId } of registered) byGame.set(gameId, zeros());
  for (const row of rows) {
    const game = byGame.get(row.gameId) ?? zeros();
    for (const figure of FIGURES) game[figure] += BigInt(row[figure] ?? 0);
    byGame.set(row.gameId, game);
  }
  const perGame: GameFigures[] = [...byGame.entries()]
    .sort(([a], [b]) => a - b)
    .map(([gameId, game]) => ({ gameId, ...typedFigures((figure) => game[figure]) }));
  // Exact at any size: a figure past 2^53 is shown with its exact decimal string (presentSettlementFigures).
  const totals = typedFigures((figure) => perGame.reduce((total, game) => total + BigInt(game[figure]), 0n));
  return { ...totals, games: perGame };
}

function intersect(a: TimeRange, b: TimeRange): TimeRange | null {
  const from = new Date(Math.max(a.from.getTime(), b.from.getTime()));
  const to = new Date(Math.min(a.to.getTime(), b.to.getTime()));
  return from < to ? { from, to } : null;
}

/** One partner's rows of a table in [range.from, range.to) by `at`: every sum below reads one such index range. */
function ownedWithin(
  table: { partnerId: AnyColumn; environment: AnyColumn },
  at: AnyColumn,
  key: ReportKey,
  range: TimeRange,
) {
  return and(
    eq(table.partnerId, key.partnerId),
    eq(table.environment, key.environment),
    sql`${at} >= ${range.from.toISOString()}::timestamptz`,
    sql`${at} < ${range.to.toISOString()}::timestamptz`,
  );
}

/** A per-game row of every figure (as exact text), `'0'` for the figures a sum does not give, so the sums union. */
function perGame(gameId: AnyColumn, figures: Partial<Record<Figure, SQL<string>>>) {
  return {
    gameId: sql<number>`${gameId}`.mapWith(Number),
    ...eachFigure((figure) => figures[figure] ?? sql<string>`'0'`),
  };
}

/**
 * Spins of a range per game: the heavy query of an unsealed range, one index-only range scan.
 * Exported so the benchmark can EXPLAIN the very statement the service runs.
 */
export function spinTotalsByGame(executor: Executor, key: ReportKey, range: TimeRange) {
  return executor
    .select(
      perGame(spins.gameId, {
        totalSpins: sql<string>`count(*)::text`,
        totalWageredMicros: sql<string>`sum(${spins.wagerMicros})::text`,
        totalPaidMicros: sql<string>`sum(${spins.payoutMicros})::text`,
      }),
    )
    .from(spins)
    .where(ownedWithin(spins, spins.createdAt, key, range))
    .groupBy(spins.gameId);
}

/** Voids made in a range, per game: a range of `spin_voids_settlement_idx`. */
function voidTotalsByGame(executor: Executor, key: ReportKey, range: TimeRange) {
  return executor
    .select(
      perGame(spinVoids.gameId, {
        voidedSpins: sql<string>`count(*)::text`,
        voidedWageredMicros: sql<string>`sum(${spinVoids.wagerMicros})::text`,
        voidedPaidMicros: sql<string>`sum(${spinVoids.payoutMicros})::text`,
      }),
    )
    .from(spinVoids)
    .where(ownedWithin(spinVoids, spinVoids.voidedAt, key, range))
    .groupBy(spinVoids.gameId);
}

/**
 * Free-round spins created in a range, per game: a range of `free_round_spins_settlement_idx`. Their
 * wagers were counted in the spins' sum and come out of `totalWageredMicros` here (the partner paid
 * them), into `freeRoundWagerMicros`.
 */
function freeRoundTotalsByGame(executor: Executor, key: ReportKey, range: TimeRange) {
  return executor
    .select(
      perGame(freeRoundSpins.gameId, {
        freeRoundSpins: sql<string>`count(*)::text`,
        freeRoundWagerMicros: sql<string>`sum(${freeRoundSpins.wagerMicros})::text`,
        totalWageredMicros: sql<string>`(-sum(${freeRoundSpins.wagerMicros}))::text`,
      }),
    )
    .from(freeRoundSpins)
    .where(ownedWithin(freeRoundSpins, freeRoundSpins.createdAt, key, range))
    .groupBy(freeRoundSpins.gameId);
}

function rollupTotalsByGame(executor: Executor, key: ReportKey, range: TimeRange) {
  const sum = (column: AnyColumn) => sql<string>`sum(${column})::text`;
  return executor
    .select({
      gameId: spinHourlyTotals.gameId,
      totalSpins: sum(spinHourlyTotals.totalSpins),
      totalWageredMicros: sum(spinHourlyTotals.totalWageredMicros),
      totalPaidMicros: sum(spinHourlyTotals.totalPaidMicros),
      voidedSpins: sum(spinHourlyTotals.voidedSpins),
      voidedWageredMicros: sum(spinHourlyTotals.voidedWageredMicros),
      voidedPaidMicros: sum(spinHourlyTotals.voidedPaidMicros),
      freeRoundSpins: sum(spinHourlyTotals.freeRoundSpins),
      freeRoundWagerMicros: sum(spinHourlyTotals.freeRoundWagerMicros),
    })
    .from(spinHourlyTotals)
    .where(ownedWithin(spinHourlyTotals, spinHourlyTotals.hour, key, range))
    .groupBy(spinHourlyTotals.gameId);
}
