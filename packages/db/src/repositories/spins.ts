import { desc, eq } from "drizzle-orm";
import type { Executor } from "../client.js";
import { spins } from "../schema/spins.js";
import type { PageWindow } from "./paging.js";
import { constraintName, isUniqueViolation } from "./pg-errors.js";
import { type NewSpin, type RecordedSpin, recordedSpinOf, recordSpinBatch } from "./spin-batch.js";
import type { SqlClient } from "./sql-client.js";

export type SpinRecord = typeof spins.$inferSelect;

/**
 * Moves the player's balance and totals and records the spin, in one statement: a batch of one (see
 * `recordSpinBatch` for the balance chain, commit-ordered `created_at`, the unique outcome key and
 * the null of an outcome whose block is closed).
 */
export async function recordSpin(client: SqlClient, spin: NewSpin): Promise<RecordedSpin | null> {
  const [recorded] = await recordSpinBatch(client, [spin]);
  return recorded ?? null;
}

/**
 * Looked up right after its write, so only the latest days' partitions are searched (a spin's
 * `created_at` is the database clock at its insert; a day covers any wait for the answer).
 */
const SPIN_BY_ID = `
  select player_id, balance_after_micros, created_at from spins
  where id = $1 and created_at > now() - interval '1 day'`;

/** The spin as recorded, if it committed (within the last day: see `SPIN_BY_ID`). */
export async function findRecordedSpin(client: SqlClient, spinId: string): Promise<RecordedSpin | null> {
  const [row] = await client.unsafe<{ player_id: string; balance_after_micros: string; created_at: string | Date }[]>(
    SPIN_BY_ID,
    [spinId],
    { prepare: true },
  );
  return row ? recordedSpinOf(row) : null;
}

/** The statement failed because this outcome was already used by a spin: drop it, never serve it. */
export function isDuplicateOutcome(error: unknown): boolean {
  return isUniqueViolation(error) && constraintName(error) === "spin_outcomes_pkey";
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
