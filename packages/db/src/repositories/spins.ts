import { timeOfId } from "@outcomes/core";
import { desc, eq } from "drizzle-orm";
import type { Executor } from "../client.js";
import { spinVoids } from "../schema/spin-voids.js";
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

/** A stored spin and its void, if it was voided. */
export interface SpinWithVoid {
  spin: SpinRecord;
  voided: SpinVoidFacts | null;
}

/** A player's spins, newest first, voided ones too (each with its void). */
export async function listPlayerSpins(db: Executor, playerId: number, page: PageWindow): Promise<SpinWithVoid[]> {
  const rows = await db
    .select({ spin: spins, reason: spinVoids.reason, voidedAt: spinVoids.voidedAt })
    .from(spins)
    .leftJoin(spinVoids, eq(spinVoids.spinId, spins.id))
    .where(eq(spins.playerId, playerId))
    .orderBy(desc(spins.createdAt), desc(spins.id))
    .limit(page.limit)
    .offset(page.offset);
  return rows.map(withVoid);
}

/** A row of spins left-joined with `spin_voids`. */
export function withVoid<T extends { reason: string | null; voidedAt: Date | null }>(
  row: T,
): Omit<T, "reason" | "voidedAt"> & { voided: SpinVoidFacts | null } {
  const { reason, voidedAt, ...rest } = row;
  return { ...rest, voided: reason !== null && voidedAt !== null ? { reason, voidedAt } : null };
}
