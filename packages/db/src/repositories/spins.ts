import type { Environment, Presentation, QueuedOutcome } from "@outcomes/core";
import { desc, eq } from "drizzle-orm";
import type { Executor } from "../client.js";
import { spins } from "../schema/spins.js";
import type { PageWindow } from "./paging.js";
import { isUniqueViolation } from "./pg-errors.js";
import type { SqlClient } from "./sql-client.js";

export type SpinRecord = typeof spins.$inferSelect;

export interface NewSpin {
  id: string;
  partnerId: string;
  environment: Environment;
  gameId: number;
  /** The partner's player id; the player row is created on its first spin. */
  externalPlayerId: string;
  outcome: QueuedOutcome;
  wagerMicros: number;
  payoutMicros: number;
  presentation: Presentation;
}

export interface RecordedSpin {
  playerId: number;
  balanceAfterMicros: number;
  createdAt: Date;
}

/**
 * Moves the player's balance and totals and records the spin, in one statement (atomic on its own,
 * so a spin with nothing else to write needs no BEGIN/COMMIT), prepared (see `SqlClient`). The upsert adds `payout − wager`
 * under the player row's lock and returns the new balance, so concurrent spins of one player
 * serialise on that row and each sees the balance the one before it left. The spin's unique
 * (block_id, outcome_index) makes a second use of an outcome fail the whole statement (see
 * `isDuplicateOutcome`). `created_at` is the clock after the row lock was taken (not the
 * transaction's start), so a player's spins sort in the order their balances chain.
 */
const RECORD_SPIN = `
  with player as (
    insert into players (partner_id, environment, external_id, balance_micros, total_spins,
      total_wagered_micros, total_paid_micros)
    values ($1, $2, $3, $4::bigint - $5::bigint, 1, $5, $4)
    on conflict (partner_id, environment, external_id) do update set
      balance_micros = players.balance_micros + excluded.balance_micros,
      total_spins = players.total_spins + 1,
      total_wagered_micros = players.total_wagered_micros + excluded.total_wagered_micros,
      total_paid_micros = players.total_paid_micros + excluded.total_paid_micros,
      updated_at = now()
    returning id, balance_micros
  )
  insert into spins (id, partner_id, environment, game_id, player_id, block_id, outcome_index, prize_tier,
    multiplier_millionths, wager_micros, payout_micros, balance_after_micros, presentation, created_at)
  select $6, $1, $2, $7, player.id, $8, $9, $10, $11, $5, $4, player.balance_micros, $12::jsonb, clock_timestamp()
  from player
  returning player_id, balance_after_micros, created_at`;

export async function recordSpin(client: SqlClient, spin: NewSpin): Promise<RecordedSpin> {
  const { outcome } = spin;
  const [row] = await client.unsafe<{ player_id: string; balance_after_micros: string; created_at: string | Date }[]>(
    RECORD_SPIN,
    [
      spin.partnerId,
      spin.environment,
      spin.externalPlayerId,
      spin.payoutMicros,
      spin.wagerMicros,
      spin.id,
      spin.gameId,
      outcome.blockId,
      outcome.index,
      outcome.tier,
      outcome.multiplierMillionths,
      JSON.stringify(spin.presentation),
    ],
    { prepare: true },
  );
  if (!row) throw new Error("spin insert returned no row");
  return {
    playerId: Number(row.player_id),
    balanceAfterMicros: Number(row.balance_after_micros),
    createdAt: new Date(row.created_at),
  };
}

/** The statement failed because this outcome was already used by a spin: drop it, never serve it. */
export function isDuplicateOutcome(error: unknown): boolean {
  return isUniqueViolation(error) && constraintName(error) === "spins_outcome_uq";
}

function constraintName(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current && typeof current === "object"; depth++) {
    const name = (current as { constraint_name?: unknown }).constraint_name;
    if (typeof name === "string") return name;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** A player's spins, newest first. */
export async function listPlayerSpins(db: Executor, playerId: number, page: PageWindow): Promise<SpinRecord[]> {
  return db
    .select()
    .from(spins)
    .where(eq(spins.playerId, playerId))
    .orderBy(desc(spins.createdAt), desc(spins.id))
    .limit(page.limit)
    .offset(page.offset);
}
