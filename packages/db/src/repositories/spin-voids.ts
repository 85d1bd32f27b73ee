import { type Environment, ErrorCode, formatScaledDecimal, microsToUsd, ServiceError } from "@outcomes/core";
import { and, eq, sql } from "drizzle-orm";
import type { Database, Executor, Transaction } from "../client.js";
import { freeRoundGrants, freeRoundPlayers, freeRoundSpins } from "../schema/free-rounds.js";
import { players } from "../schema/players.js";
import { spinVoids } from "../schema/spin-voids.js";
import { spins } from "../schema/spins.js";
import { insertEvent } from "./events.js";
import { exceededPlayerBound } from "./pg-errors.js";
import { type SpinVoidFacts, type StoredSpin, spinTimeWindow, withVoidAndFreeRound } from "./spins.js";

// Voids and recall (CONTRACT §13, docs/spins.md "Voids"): a spin looked up again by its id, and
// undone in one transaction with its player's figures and the `spin.voided` event.

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

export interface VoidRequest {
  reason: string;
  /** How long after its `createdAt` a spin can be voided (VOID_WINDOW_HOURS). */
  windowHours: number;
}

export interface VoidResult {
  spin: RecalledSpin;
  /** False when the spin had been voided before: the first void is shown and nothing changed. */
  voidedNow: boolean;
}

/**
 * Voids the owner's spin: the void's row, the player's figures reversed (balance += wager − payout,
 * one spin, its wager and its payout fewer) and the `spin.voided` event, in one transaction.
 *
 * A free-round spin's void (CONTRACT §14) reverses its payout only (the player paid no wager, so
 * `voided_wager_micros` is 0 for it) and gives the round back while its grant is active.
 *
 * Locks in the spin path's order: a free-round spin's row of its grant first, then the player's row (`FOR UPDATE`, which also gives the
 * transaction its id before `voided_at` is read, as the roll-ups' seal needs), then the event
 * counter last (`insertEvent`). Concurrent voids of one spin queue on that row; each then finds the
 * void committed by the one before and answers it, so exactly one takes effect (the primary key of
 * `spin_voids` would refuse a second anyway). The spin row is never written.
 *
 * 404 KS-4215 for a spin that is not the owner's; 409 KS-4217 past the window (a spin already voided
 * answers its void whenever asked); 400 KS-4103 when reversing it would take a figure of the player
 * past 2^53 − 1 micro-USD.
 */
export async function voidSpin(
  db: Database,
  owner: { partnerId: string; environment: Environment },
  spinId: string,
  request: VoidRequest,
): Promise<VoidResult> {
  try {
    return await db.transaction(async (tx) => {
      const found = await requireOwnSpin(tx, owner, spinId);
      const { spin } = found;
      if (found.freeRound) await lockFreeRoundPlayer(tx, found.freeRound.freeRoundsId, found.externalPlayerId);
      const [locked] = await tx.execute<{ now: Date }>(sql`
        select now() as now, pg_current_xact_id() from ${players} where id = ${spin.playerId} for update`);
      const earlier = await findSpinVoid(tx, spinId);
      if (earlier) return { spin: { ...found, voided: earlier }, voidedNow: false };
      if (new Date(locked!.now).getTime() >= spin.createdAt.getTime() + request.windowHours * 3_600_000) {
        throw new ServiceError(ErrorCode.SpinNotVoidable, {
          message: `Spin can no longer be voided: spins can be voided within ${request.windowHours} hours of their createdAt`,
        });
      }
      const voided = await recordVoid(tx, found, request.reason);
      return { spin: { ...found, voided }, voidedNow: true };
    });
  } catch (error) {
    const figure = exceededPlayerBound(error);
    if (figure === null) throw error;
    const bound = `${formatScaledDecimal(Number.MAX_SAFE_INTEGER)} USD`;
    throw new ServiceError(ErrorCode.WagerOutOfRange, {
      message: `Void refused: reversing the spin would take the player's ${figure} past ${bound}, the most it can show exactly; nothing was written`,
    });
  }
}

function lockFreeRoundPlayer(tx: Transaction, grantId: string, externalPlayerId: string) {
  return tx.execute(sql`
    select 1 from ${freeRoundPlayers}
    where ${freeRoundPlayers.grantId} = ${grantId} and ${freeRoundPlayers.externalPlayerId} = ${externalPlayerId}
    for update`);
}

async function recordVoid(tx: Transaction, found: RecalledSpin, reason: string): Promise<SpinVoidFacts> {
  const { spin, freeRound } = found;
  // What the player paid: nothing for a free round (the partner paid its wager).
  const chargedMicros = freeRound ? 0 : spin.wagerMicros;
  const [inserted] = await tx
    .insert(spinVoids)
    .values({
      spinId: spin.id,
      partnerId: spin.partnerId,
      environment: spin.environment,
      gameId: spin.gameId,
      playerId: spin.playerId,
      spinCreatedAt: spin.createdAt,
      blockId: spin.blockId,
      outcomeIndex: spin.outcomeIndex,
      prizeTier: spin.prizeTier,
      wagerMicros: chargedMicros,
      payoutMicros: spin.payoutMicros,
      reason,
      voidedAt: sql`clock_timestamp()`,
    })
    .returning({ voidedAt: spinVoids.voidedAt });
  const voidedAt = inserted!.voidedAt;
  // `updated_at` stays: it is the player's latest spin's time, which the next spin's `created_at` follows.
  await tx
    .update(players)
    .set({
      balanceMicros: sql`${players.balanceMicros} + ${chargedMicros} - ${spin.payoutMicros}`,
      totalSpins: sql`${players.totalSpins} - 1`,
      totalWageredMicros: sql`${players.totalWageredMicros} - ${chargedMicros}`,
      totalPaidMicros: sql`${players.totalPaidMicros} - ${spin.payoutMicros}`,
    })
    .where(eq(players.id, spin.playerId));
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
