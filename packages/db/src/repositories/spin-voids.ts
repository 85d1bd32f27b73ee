import { type Environment, ErrorCode, microsToUsd, ServiceError } from "@outcomes/core";
import { and, eq, sql } from "drizzle-orm";
import type { Executor, Transaction } from "../client.js";
import { freeRoundGrants, freeRoundPlayers, freeRoundSpins } from "../schema/free-rounds.js";
import { players } from "../schema/players.js";
import { spinVoids } from "../schema/spin-voids.js";
import { spins } from "../schema/spins.js";
import { insertEvent } from "./events.js";
import { BALANCE_MOVE, CHARGED_MICROS } from "./player-figures.js";
import { periodVoidUpdates } from "./protection-checks.js";
import { type SpinVoidFacts, type StoredSpin, spinTimeWindow, withVoidAndFreeRound } from "./spins.js";
import { rowsOf } from "./sql-client.js";

// Voids and recall (CONTRACT §13, docs/spins.md "Voids"): a spin looked up again by its id, and the
// statements of its void (the rules, the window among them, are the API's void service's).

/** A stored spin with its player's own id and its void, as `GET /spins/{spinId}` shows it. */
export interface RecalledSpin extends StoredSpin {
  externalPlayerId: string;
}

const unknownSpin = () => new ServiceError(ErrorCode.NotFound, { message: "Spin not found" });

/**
 * A spin by its id (bounded by the id's time, so a few daily partitions are read), with its player's
 * own id and its void; only the owner's when `owner` is given (an operator sees every partner's).
 */
export async function findSpin(
  db: Executor,
  spinId: string,
  owner?: { partnerId: string; environment: Environment },
): Promise<RecalledSpin | null> {
  const dated = spinTimeWindow(spinId);
  if (dated === null) return null;
  const [row] = await spinLookup(db, spinId, dated, owner);
  return row ? withVoidAndFreeRound(row) : null;
}

/** `findSpin`'s statement; exported so a test can read which partitions its plan scans. */
export function spinLookup(
  db: Executor,
  spinId: string,
  dated: { from: string; to: string },
  owner?: { partnerId: string; environment: Environment },
) {
  return db
    .select({
      spin: spins,
      externalPlayerId: players.externalId,
      reason: spinVoids.reason,
      voidedAt: spinVoids.voidedAt,
      grantId: freeRoundSpins.grantId,
      roundsLeft: freeRoundSpins.roundsLeft,
    })
    .from(spins)
    .innerJoin(players, eq(players.id, spins.playerId))
    .leftJoin(spinVoids, eq(spinVoids.spinId, spins.id))
    .leftJoin(freeRoundSpins, eq(freeRoundSpins.spinId, spins.id))
    .where(
      and(
        eq(spins.id, spinId),
        sql`${spins.createdAt} between ${dated.from}::timestamptz and ${dated.to}::timestamptz`,
        owner && eq(spins.partnerId, owner.partnerId),
        owner && eq(spins.environment, owner.environment),
      ),
    );
}

/** The owner's spin, or 404 KS-4215 (another partner's or environment's, or none). */
export async function requireOwnSpin(
  db: Executor,
  owner: { partnerId: string; environment: Environment },
  spinId: string,
): Promise<RecalledSpin> {
  const found = await findSpin(db, spinId, owner);
  if (!found) throw unknownSpin();
  return found;
}

/** The void of a spin whose id came from the record (an idempotent replay), if it was voided. */
export async function findSpinVoid(db: Executor, spinId: string): Promise<SpinVoidFacts | null> {
  const [row] = await db
    .select({ reason: spinVoids.reason, voidedAt: spinVoids.voidedAt })
    .from(spinVoids)
    .where(eq(spinVoids.spinId, spinId));
  return row ?? null;
}

/** The owner's spin, locked for its void, with the database's clock then and its earlier void if any. */
export interface SpinForVoid {
  found: RecalledSpin;
  /** Postgres's clock once the locks were held: the void window is measured on it. */
  now: Date;
  /** The spin's void, when one committed before: a void is made once. */
  earlier: SpinVoidFacts | null;
}

/**
 * The owner's spin for its void (404 KS-4215 when it is not the owner's), locked in the spin path's
 * order: a free-round spin's row of its grant first, then the player's row (`FOR UPDATE`, which also
 * gives the transaction its id before `voided_at` is read, as the roll-ups' seal needs); the event
 * counter comes last (`recordSpinVoid`). Concurrent voids of one spin queue on that row; each then
 * finds the void committed by the one before (`earlier`), so exactly one takes effect (the primary
 * key of `spin_voids` would refuse a second anyway). The spin row is never written.
 */
export async function lockSpinForVoid(
  tx: Transaction,
  owner: { partnerId: string; environment: Environment },
  spinId: string,
): Promise<SpinForVoid> {
  const found = await requireOwnSpin(tx, owner, spinId);
  if (found.freeRound) await lockFreeRoundPlayer(tx, found.freeRound.freeRoundsId, found.externalPlayerId);
  const [locked] = await tx.execute<{ now: Date | string }>(sql`
    select now() as now, pg_current_xact_id() from ${players} where id = ${found.spin.playerId} for update`);
  return { found, now: new Date(locked!.now), earlier: await findSpinVoid(tx, spinId) };
}

function lockFreeRoundPlayer(tx: Transaction, grantId: string, externalPlayerId: string) {
  return tx.execute(sql`
    select 1 from ${freeRoundPlayers}
    where ${freeRoundPlayers.grantId} = ${grantId} and ${freeRoundPlayers.externalPlayerId} = ${externalPlayerId}
    for update`);
}

/**
 * Voids a spin locked by `lockSpinForVoid` in the same transaction: the void's row, the player's
 * figures moved back by the spin's own move (player-figures.ts: a free-round spin's payout only, and
 * 0 in `voided_wager_micros`), the round given back while its grant is active (CONTRACT §14), and
 * the `spin.voided` event. A figure of the player taken past 2^53 − 1 fails the statement
 * (`exceededPlayerBound` tells which). The player's `updated_at` stays: it is the time of its latest
 * spin, which the next spin's `created_at` follows.
 */
export async function recordSpinVoid(tx: Transaction, found: RecalledSpin, reason: string): Promise<SpinVoidFacts> {
  const { spin, freeRound } = found;
  const [row] = await rowsOf<{ voided_at: Date | string }>(
    tx,
    sql`
      with spin as (
        select ${spin.wagerMicros}::bigint as wager_micros, ${spin.payoutMicros}::bigint as payout_micros,
          ${freeRound?.freeRoundsId ?? null}::text as free_rounds_id,
          ${spin.createdAt.toISOString()}::timestamptz as spun_at
      ),
      charged as (select payout_micros, spun_at, ${sql.raw(CHARGED_MICROS)} as charged_micros from spin),
      player as (
        update ${players} set
          balance_micros = balance_micros - ${sql.raw(BALANCE_MOVE)},
          total_spins = total_spins - 1,
          total_wagered_micros = total_wagered_micros - charged_micros,
          total_paid_micros = total_paid_micros - payout_micros,
          ${sql.raw(periodVoidUpdates("charged.spun_at"))}
        from charged where id = ${spin.playerId}::bigint
      )
      insert into ${spinVoids} (spin_id, partner_id, environment, game_id, player_id, spin_created_at, block_id,
        outcome_index, prize_tier, wager_micros, payout_micros, reason, voided_at)
      select ${spin.id}::text, ${spin.partnerId}::text, ${spin.environment}::text, ${spin.gameId}::int,
        ${spin.playerId}::bigint, ${spin.createdAt.toISOString()}::timestamptz, ${spin.blockId}::bigint,
        ${spin.outcomeIndex}::int, ${spin.prizeTier}::text, charged_micros, payout_micros, ${reason}::text,
        clock_timestamp()
      from charged
      returning voided_at`,
  );
  const voidedAt = new Date(row!.voided_at);
  if (freeRound) await giveRoundBack(tx, freeRound.freeRoundsId, found.externalPlayerId, spin.payoutMicros);
  await insertEvent(tx, {
    partnerId: spin.partnerId,
    environment: spin.environment,
    type: "spin.voided",
    now: voidedAt,
    data: {
      spinId: spin.id,
      gameId: spin.gameId,
      playerId: found.externalPlayerId,
      wagerUsd: microsToUsd(spin.wagerMicros),
      payoutUsd: microsToUsd(spin.payoutMicros),
      prizeTier: spin.prizeTier,
      reason,
      voidedAt: voidedAt.toISOString(),
    },
  });
  return { reason, voidedAt };
}

/** The voided free-round spin's payout leaves its player's rounds; the round itself comes back only while the grant is active. */
async function giveRoundBack(tx: Transaction, grantId: string, externalPlayerId: string, payoutMicros: number) {
  const active = sql`${freeRoundGrants.cancelledAt} is null and ${freeRoundGrants.expiresAt} > clock_timestamp()`;
  await tx.execute(sql`
    update ${freeRoundPlayers} set
      rounds_used = rounds_used - (select case when ${active} then 1 else 0 end
        from ${freeRoundGrants} where ${freeRoundGrants.id} = ${grantId}),
      paid_micros = paid_micros - ${payoutMicros}
    where ${freeRoundPlayers.grantId} = ${grantId} and ${freeRoundPlayers.externalPlayerId} = ${externalPlayerId}`);
}
