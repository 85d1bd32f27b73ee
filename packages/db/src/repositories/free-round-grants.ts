import { couldBeId, type Environment, ErrorCode, type FreeRoundStatus, newId, ServiceError } from "@outcomes/core";
import { and, count, desc, eq, getTableColumns, type SQL, sql } from "drizzle-orm";
import type { Database, Executor, Transaction } from "../client.js";
import { freeRoundGrants, freeRoundPlayers } from "../schema/free-rounds.js";
import type { Paged, PageWindow } from "./paging.js";

// Free-round grants (CONTRACT §14, docs/free-rounds.md).

export type FreeRoundGrantRecord = typeof freeRoundGrants.$inferSelect;
export type FreeRoundPlayerRecord = typeof freeRoundPlayers.$inferSelect;

/** A grant with its status as of the moment it was read. */
export type FreeRoundGrantWithStatus = FreeRoundGrantRecord & { status: FreeRoundStatus };

/** The caller a grant must belong to: a partner in one environment. */
export interface FreeRoundGrantOwner {
  partnerId: string;
  environment: Environment;
}

export interface NewFreeRoundGrant {
  gameId: number;
  /** Checked against the game's bounds by the caller. */
  wagerMicros: number;
  rounds: number;
  expiresAt: Date;
  /** The partner's own player ids (at most 1,000: the route's limit keeps the insert one statement). */
  playerIds: readonly string[];
}

/**
 * Postgres's clock decides, the same for every process: a grant is expired from `expires_at` on
 * without any job having run, and a cancel wins over expiry.
 */
const status = sql<FreeRoundStatus>`case
  when ${freeRoundGrants.cancelledAt} is not null then 'cancelled'
  when ${freeRoundGrants.expiresAt} <= now() then 'expired'
  else 'active' end`;
const withStatus = { ...getTableColumns(freeRoundGrants), status };

const ownedBy = (owner: FreeRoundGrantOwner) =>
  and(eq(freeRoundGrants.partnerId, owner.partnerId), eq(freeRoundGrants.environment, owner.environment));

/**
 * The grant and one row per player, in the caller's transaction (the keyed-create concern's, which
 * stores the key's record with them): a grant is never seen without its players.
 */
export async function createFreeRoundGrant(
  tx: Transaction,
  owner: FreeRoundGrantOwner,
  input: NewFreeRoundGrant,
): Promise<FreeRoundGrantWithStatus> {
  const playerIds = [...new Set(input.playerIds)];
  const [grant] = await tx
    .insert(freeRoundGrants)
    .values({
      id: newId("fr"),
      ...owner,
      gameId: input.gameId,
      wagerMicros: input.wagerMicros,
      rounds: input.rounds,
      playerCount: playerIds.length,
      expiresAt: input.expiresAt,
    })
    .returning(withStatus);
  if (!grant) throw new Error("grant insert returned no row");
  await tx
    .insert(freeRoundPlayers)
    .values(playerIds.map((externalPlayerId) => ({ grantId: grant.id, externalPlayerId, rounds: input.rounds })));
  return grant;
}

async function pageOfGrants(db: Executor, where: SQL | undefined, page: PageWindow) {
  const [rows, [total]] = await Promise.all([
    db
      .select(withStatus)
      .from(freeRoundGrants)
      .where(where)
      .orderBy(desc(freeRoundGrants.createdAt), desc(freeRoundGrants.id))
      .limit(page.limit)
      .offset(page.offset),
    db.select({ value: count() }).from(freeRoundGrants).where(where),
  ]);
  return { rows, total: total?.value ?? 0 };
}

/** The owner's grants, newest first. */
export function listFreeRoundGrants(
  db: Executor,
  owner: FreeRoundGrantOwner,
  page: PageWindow,
): Promise<Paged<FreeRoundGrantWithStatus>> {
  return pageOfGrants(db, ownedBy(owner), page);
}

/** A partner's grants for an operator, newest first: one environment's, or both. */
export function listFreeRoundGrantsForOperator(
  db: Executor,
  filter: { partnerId: string; environment?: Environment | undefined },
  page: PageWindow,
): Promise<Paged<FreeRoundGrantWithStatus>> {
  const where = and(
    eq(freeRoundGrants.partnerId, filter.partnerId),
    filter.environment !== undefined ? eq(freeRoundGrants.environment, filter.environment) : undefined,
  );
  return pageOfGrants(db, where, page);
}

const grantNotFound = () => new ServiceError(ErrorCode.FreeRoundsNotFound);

/**
 * The owner's grant, or 404 KS-4219 (unknown, another partner's, another environment's: all alike).
 * `lock` takes a row lock of that strength.
 */
export async function requireOwnFreeRoundGrant(
  db: Executor,
  owner: FreeRoundGrantOwner,
  grantId: string,
  options: { lock?: "no key update" } = {},
): Promise<FreeRoundGrantWithStatus> {
  // Text no id of ours has names nothing stored (and U+0000 must not reach Postgres).
  if (!couldBeId(grantId)) throw grantNotFound();
  const query = db
    .select(withStatus)
    .from(freeRoundGrants)
    .where(and(eq(freeRoundGrants.id, grantId), ownedBy(owner)));
  const [grant] = options.lock ? await query.for(options.lock) : await query;
  if (!grant) throw grantNotFound();
  return grant;
}

/** Any partner's grant with its status (operator look-ups), or null. */
export async function lookUpFreeRoundGrant(db: Executor, grantId: string): Promise<FreeRoundGrantWithStatus | null> {
  if (!couldBeId(grantId)) return null;
  const [grant] = await db.select(withStatus).from(freeRoundGrants).where(eq(freeRoundGrants.id, grantId));
  return grant ?? null;
}

/** A player's row of a grant, or null when the player is not in it. */
export async function findFreeRoundPlayer(
  db: Executor,
  grantId: string,
  playerId: string,
): Promise<FreeRoundPlayerRecord | null> {
  const [player] = await db
    .select()
    .from(freeRoundPlayers)
    .where(and(eq(freeRoundPlayers.grantId, grantId), eq(freeRoundPlayers.externalPlayerId, playerId)));
  return player ?? null;
}

/**
 * Cancels the owner's grant under its row lock, so of concurrent cancels the first sets
 * `cancelled_at` and the others answer it unchanged. An expired grant is cancelled too: it then
 * shows `cancelled`, the last word on it.
 */
export async function cancelFreeRoundGrant(
  db: Database,
  owner: FreeRoundGrantOwner,
  grantId: string,
): Promise<FreeRoundGrantWithStatus> {
  return db.transaction(async (tx) => {
    const current = await requireOwnFreeRoundGrant(tx, owner, grantId, { lock: "no key update" });
    if (current.cancelledAt) return current;
    const [cancelled] = await tx
      .update(freeRoundGrants)
      .set({ cancelledAt: sql`now()` })
      .where(eq(freeRoundGrants.id, grantId))
      .returning(withStatus);
    return cancelled!;
  });
}
