import { timeOfId } from "@outcomes/core";
import type { Database } from "../client.js";
import type { spins } from "../schema/spins.js";
import type { PageWindow } from "./paging.js";
import { constraintName, isUniqueViolation } from "./pg-errors.js";
import type { PlayerRecord } from "./players.js";
import { type LeftOutSpin, type NewSpin, type RecordedSpin, recordedSpinOf, recordSpins } from "./record-spins.js";
import { type SqlClient, sqlClientOf } from "./sql-client.js";

export type SpinRecord = typeof spins.$inferSelect;

/**
 * Moves the player's balance and totals and records the spin, in one statement: a batch of one (see
 * `recordSpins` for the balance chain, commit-ordered `created_at`, the unique outcome key and
 * the null of an outcome whose block is closed).
 */
export async function recordSpin(client: SqlClient, spin: NewSpin): Promise<RecordedSpin | LeftOutSpin> {
  const [recorded] = await recordSpins(client, [spin]);
  return recorded!;
}

/**
 * Looked up right after its write, so only the latest days' partitions are searched (a spin's
 * `created_at` is the database clock at its insert; a day covers any wait for the answer).
 */
const SPIN_BY_ID = `
  select s.player_id, s.balance_after_micros, s.created_at, f.rounds_left
  from spins s left join free_round_spins f on f.spin_id = s.id
  where s.id = $1 and s.created_at > now() - interval '1 day'`;

/** The spin as recorded, if it committed (within the last day: see `SPIN_BY_ID`). */
export async function findRecordedSpin(client: SqlClient, spinId: string): Promise<RecordedSpin | null> {
  const [row] = await client.unsafe<
    { player_id: string; balance_after_micros: string; created_at: string | Date; rounds_left: number | null }[]
  >(SPIN_BY_ID, [spinId], { prepare: true });
  return row ? recordedSpinOf(row) : null;
}

/** The statement failed because this outcome was already used by a spin: drop it, never serve it. */
export function isDuplicateOutcome(error: unknown): boolean {
  return isUniqueViolation(error) && constraintName(error) === "spin_outcomes_pkey";
}

/**
 * Where a spin's `created_at` lies, from its id: the commit time is a moment after the id was made
 * (the request's start), and a day either side is far more than any request lasts. A look-up by id
 * bounded by it reads a few daily partitions of `spins`. Null for text that is no spin id we made.
 */
export function spinTimeWindow(spinId: string): { from: string; to: string } | null {
  const idTime = timeOfId(spinId);
  if (idTime === null) return null;
  return {
    from: new Date(idTime - SPIN_ID_SLACK_MS).toISOString(),
    to: new Date(idTime + SPIN_ID_SLACK_MS).toISOString(),
  };
}

const SPIN_ID_SLACK_MS = 86_400_000;

/** A void as every spin result shows it (CONTRACT §13). */
export interface SpinVoidFacts {
  reason: string;
  voidedAt: Date;
}

/** A free-round spin's grant and its player's rounds left after it, as the spin answered (CONTRACT §14). */
export interface FreeRoundFacts {
  freeRoundsId: string;
  roundsLeft: number;
}

/** A stored spin, its void if it was voided, and its free round if it used one. */
export interface StoredSpin {
  spin: SpinRecord;
  voided: SpinVoidFacts | null;
  freeRound: FreeRoundFacts | null;
}

/**
 * How far before its player row's `created_at` a spin could be dated: none by construction (a
 * player's first spin is dated by the clock inside the statement that creates the player, every
 * later one after the previous), so this is only a margin for a database clock set back meanwhile.
 */
const PLAYER_AGE_SLACK_MS = 86_400_000;
/**
 * A page is first looked for among the player's spins of the day before its latest one: at most two
 * day partitions, where an active player's newest pages lie.
 */
const RECENT_MS = 86_400_000;

/**
 * A page of the player's spins in [$2, $3], newest first, each with its void if it has one.
 * postgres.js answers int8 as text, and timestamps as text too on a drizzle-wrapped client (drizzle
 * turns its date parsers off).
 */
const PLAYER_SPINS_PAGE = `
  select s.id, s.game_id, s.block_id, s.outcome_index, s.prize_tier, s.multiplier_millionths, s.wager_micros,
    s.payout_micros, s.balance_after_micros, s.presentation, s.created_at, v.reason, v.voided_at,
    f.grant_id, f.rounds_left
  from spins s left join spin_voids v on v.spin_id = s.id left join free_round_spins f on f.spin_id = s.id
  where s.player_id = $1 and s.created_at >= $2 and s.created_at <= $3
  order by s.created_at desc, s.id desc limit $4 offset $5`;
type StoredSpinRow = {
  id: string;
  game_id: number;
  block_id: string | null;
  outcome_index: number | null;
  prize_tier: string;
  multiplier_millionths: string;
  wager_micros: string;
  payout_micros: string;
  balance_after_micros: string;
  presentation: unknown;
  created_at: string;
  reason: string | null;
  voided_at: string | null;
  grant_id: string | null;
  rounds_left: number | null;
};

/**
 * A player's spins, newest first, voided ones too (each with its void). Every spin of the player is dated within [its `createdAt`, its
 * `updatedAt`] (`updatedAt` is its latest spin's time: see `recordSpins`), so the statement
 * reads only the day partitions of the player's life, pruned at executor start (it is prepared: no
 * planning over every day); and first only the last day of it: when that holds the whole page (the
 * rows before it in the order are all newer than any spin outside it), the page is that. Read
 * through postgres.js and mapped here (drizzle's row mapping cost ~60 µs of a 20-row page).
 */
export async function listPlayerSpins(
  db: Database,
  player: Pick<PlayerRecord, "id" | "partnerId" | "environment" | "createdAt" | "updatedAt">,
  page: PageWindow,
): Promise<StoredSpin[]> {
  const since = player.createdAt.getTime() - PLAYER_AGE_SLACK_MS;
  const until = player.updatedAt.toISOString();
  const read = (from: number) =>
    sqlClientOf(db).unsafe<StoredSpinRow[]>(
      PLAYER_SPINS_PAGE,
      [player.id, new Date(from).toISOString(), until, page.limit, page.offset],
      { prepare: true },
    );
  const recent = player.updatedAt.getTime() - RECENT_MS;
  let rows = await read(Math.max(since, recent));
  if (rows.length < page.limit && recent > since) rows = await read(since);
  return rows.map((row) => ({
    spin: {
      id: row.id,
      partnerId: player.partnerId,
      environment: player.environment,
      gameId: row.game_id,
      playerId: player.id,
      blockId: row.block_id === null ? null : Number(row.block_id),
      outcomeIndex: row.outcome_index,
      // A spin is forced exactly when it took no block entry (the check `spins_outcome_or_forced`).
      forced: row.block_id === null,
      prizeTier: row.prize_tier,
      multiplierMillionths: Number(row.multiplier_millionths),
      wagerMicros: Number(row.wager_micros),
      payoutMicros: Number(row.payout_micros),
      balanceAfterMicros: Number(row.balance_after_micros),
      presentation: row.presentation,
      createdAt: new Date(row.created_at),
    },
    voided: voidOf(row.reason, row.voided_at === null ? null : new Date(row.voided_at)),
    freeRound: freeRoundOf(row.grant_id, row.rounds_left),
  }));
}

const voidOf = (reason: string | null, voidedAt: Date | null): SpinVoidFacts | null =>
  reason !== null && voidedAt !== null ? { reason, voidedAt } : null;
const freeRoundOf = (grantId: string | null, roundsLeft: number | null): FreeRoundFacts | null =>
  grantId !== null && roundsLeft !== null ? { freeRoundsId: grantId, roundsLeft } : null;

/** A row of spins left-joined with `spin_voids` and `free_round_spins`. */
export function withVoidAndFreeRound<
  T extends { reason: string | null; voidedAt: Date | null; grantId: string | null; roundsLeft: number | null },
>(row: T): Omit<T, "reason" | "voidedAt" | "grantId" | "roundsLeft"> & Omit<StoredSpin, "spin"> {
  const { reason, voidedAt, grantId, roundsLeft, ...rest } = row;
  return {
    ...rest,
    voided: voidOf(reason, voidedAt),
    freeRound: freeRoundOf(grantId, roundsLeft),
  };
}
