import { and, desc, eq, gte, sql } from "drizzle-orm";
import type { Executor } from "../client.js";
import { spins } from "../schema/spins.js";
import type { PageWindow } from "./paging.js";
import { constraintName, isUniqueViolation } from "./pg-errors.js";
import { preparedPerHandle } from "./prepared.js";
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
 * How far before its player row's `created_at` a spin could be dated: none by construction (a
 * player's first spin is dated by the clock inside the statement that creates the player, every
 * later one after the previous), so this is only a margin for a database clock set back meanwhile.
 */
const PLAYER_AGE_SLACK_MS = 86_400_000;

const playerSpinsPage = preparedPerHandle((db) =>
  db
    .select()
    .from(spins)
    .where(and(eq(spins.playerId, sql.placeholder("playerId")), gte(spins.createdAt, sql.placeholder("since"))))
    .orderBy(desc(spins.createdAt), desc(spins.id))
    .limit(sql.placeholder("limit"))
    .offset(sql.placeholder("offset"))
    .prepare("player_spins_page"),
);

/**
 * A player's spins, newest first. Bounded below by the player's creation, so the day partitions
 * older than the player are pruned (at executor start: the statement is prepared).
 */
export async function listPlayerSpins(
  db: Executor,
  player: { id: number; createdAt: Date },
  page: PageWindow,
): Promise<SpinRecord[]> {
  return playerSpinsPage(db).execute({
    playerId: player.id,
    since: new Date(player.createdAt.getTime() - PLAYER_AGE_SLACK_MS).toISOString(),
    limit: page.limit,
    offset: page.offset,
  });
}
