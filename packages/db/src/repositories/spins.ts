import type { Environment, Presentation, QueuedOutcome } from "@outcomes/core";
import { desc, eq } from "drizzle-orm";
import type { Executor } from "../client.js";
import { spins } from "../schema/spins.js";
import type { PageWindow } from "./paging.js";
import { isUniqueViolation } from "./pg-errors.js";
import { recordSpinBatch } from "./spin-batch.js";
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
 * Moves the player's balance and totals and records the spin, in one statement: a batch of one (see
 * `recordSpinBatch` for the balance chain, commit-ordered `created_at` and the unique outcome key).
 */
export async function recordSpin(client: SqlClient, spin: NewSpin): Promise<RecordedSpin> {
  const [recorded] = await recordSpinBatch(client, [spin]);
  if (!recorded) throw new Error("spin insert returned no row");
  return recorded;
}

const SPIN_OF_OUTCOME = `
  select id, player_id, balance_after_micros, created_at from spins where block_id = $1 and outcome_index = $2`;

/** The spin that used this outcome, if one committed (the outcome's unique key). */
export async function findSpinOfOutcome(
  client: SqlClient,
  outcome: Pick<QueuedOutcome, "blockId" | "index">,
): Promise<(RecordedSpin & { id: string }) | null> {
  const [row] = await client.unsafe<
    { id: string; player_id: string; balance_after_micros: string; created_at: string | Date }[]
  >(SPIN_OF_OUTCOME, [outcome.blockId, outcome.index], { prepare: true });
  return row
    ? {
        id: row.id,
        playerId: Number(row.player_id),
        balanceAfterMicros: Number(row.balance_after_micros),
        createdAt: new Date(row.created_at),
      }
    : null;
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
