import type { Environment, Presentation, QueuedOutcome } from "@outcomes/core";
import { desc, eq, sql } from "drizzle-orm";
import type { Executor, Transaction } from "../client.js";
import { players } from "../schema/players.js";
import { spins } from "../schema/spins.js";
import { isUniqueViolation } from "./pg-errors.js";

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
 * Moves the player's balance and totals and records the spin, in one statement (one round trip).
 * The upsert adds `payout − wager` to the row under its row lock and returns the new balance, so
 * concurrent spins of one player serialise on that row and each sees the balance the one before
 * it left. The spin's unique (block_id, outcome_index) makes a second use of an outcome fail the
 * whole statement (see `isDuplicateOutcome`). `created_at` is the clock after the row lock was
 * taken (not the transaction's start), so a player's spins sort in the order their balances chain.
 */
export async function recordSpin(tx: Transaction, spin: NewSpin): Promise<RecordedSpin> {
  const delta = spin.payoutMicros - spin.wagerMicros;
  const [row] = await tx.execute<{ player_id: string; balance_after_micros: string; created_at: string | Date }>(sql`
    with player as (
      insert into ${players} (partner_id, environment, external_id, balance_micros, total_spins,
        total_wagered_micros, total_paid_micros)
      values (${spin.partnerId}, ${spin.environment}, ${spin.externalPlayerId}, ${delta}, 1,
        ${spin.wagerMicros}, ${spin.payoutMicros})
      on conflict (partner_id, environment, external_id) do update set
        balance_micros = ${players}.balance_micros + excluded.balance_micros,
        total_spins = ${players}.total_spins + 1,
        total_wagered_micros = ${players}.total_wagered_micros + excluded.total_wagered_micros,
        total_paid_micros = ${players}.total_paid_micros + excluded.total_paid_micros,
        updated_at = now()
      returning id, balance_micros
    )
    insert into ${spins} (id, partner_id, environment, game_id, player_id, block_id, outcome_index, prize_tier,
      multiplier_millionths, wager_micros, payout_micros, balance_after_micros, presentation, created_at)
    select ${spin.id}, ${spin.partnerId}, ${spin.environment}, ${spin.gameId}, player.id, ${spin.outcome.blockId},
      ${spin.outcome.index}, ${spin.outcome.tier}, ${spin.outcome.multiplierMillionths}, ${spin.wagerMicros},
      ${spin.payoutMicros}, player.balance_micros, ${JSON.stringify(spin.presentation)}::jsonb, clock_timestamp()
    from player
    returning player_id, balance_after_micros, created_at`);
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
export async function listPlayerSpins(
  db: Executor,
  playerId: number,
  page: { limit: number; offset: number },
): Promise<SpinRecord[]> {
  return db
    .select()
    .from(spins)
    .where(eq(spins.playerId, playerId))
    .orderBy(desc(spins.createdAt), desc(spins.id))
    .limit(page.limit)
    .offset(page.offset);
}
