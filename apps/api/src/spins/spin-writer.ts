import { newId, type Outcome, type OutcomePosition, payoutMicros, presentationOf } from "@outcomes/core";
import {
  findRecordedSpin,
  insertEvents,
  markBlocksProgress,
  type NewEvent,
  type NewSpin,
  type RecordedSpin,
  recordSpin,
  recordSpinBatch,
  type SqlClient,
  type SqlPool,
  type SqlTransaction,
} from "@outcomes/db";
import { presentSpin, type SpinResultBody } from "@outcomes/records";
import type { PartnerAuth } from "../auth/key-verifier.js";
import type { GameRules } from "./game-cache.js";
import { UnusableOutcomeError } from "./outcome-queue.js";

/** Everything the write of one spin needs, decided before any statement is sent. */
export interface SpinPlan {
  spin: NewSpin;
  partner: PartnerAuth;
  /** Payout at or over the game's threshold: a `spin.large_win` event goes with the spin. */
  largeWin: boolean;
  /** The outcome's place when it is the first or last of its block: the block's status (and the reserve) change. */
  blockBoundary: OutcomePosition | null;
  minReadyBlocks: number;
  /** A large win or a block boundary: more than the spin itself to write, so a transaction. */
  needsTransaction: boolean;
}

export interface WrittenSpin {
  spin: NewSpin;
  body: SpinResultBody;
  largeWin: boolean;
  /** Fewer than MIN_READY_BLOCKS are ready now: ask for generation after the commit. */
  generationNeeded: boolean;
}

export function planSpin(input: {
  partner: PartnerAuth;
  game: GameRules;
  playerId: string;
  wagerMicros: number;
  outcome: Outcome;
  /** The block entry the outcome was taken from, and the block's size; null for a forced spin. */
  block: { position: OutcomePosition; size: number } | null;
  minReadyBlocks: number;
}): SpinPlan {
  const { partner, game, outcome, block } = input;
  const payout = payoutMicros(input.wagerMicros, outcome.multiplierMillionths);
  const largeWin = payout > 0 && payout >= game.largeWinThresholdMicros;
  const blockBoundary =
    block && (block.position.index === 0 || block.position.index + 1 >= block.size) ? block.position : null;
  return {
    spin: {
      id: newId("spn"),
      partnerId: partner.partnerId,
      environment: partner.environment,
      gameId: game.id,
      externalPlayerId: input.playerId,
      outcome,
      position: block?.position ?? null,
      wagerMicros: input.wagerMicros,
      payoutMicros: payout,
      presentation: presentationOf(outcome),
    },
    partner,
    largeWin,
    blockBoundary,
    minReadyBlocks: input.minReadyBlocks,
    needsTransaction: largeWin || blockBoundary !== null,
  };
}

function resultOf(spin: NewSpin, recorded: RecordedSpin): SpinResultBody {
  return presentSpin({
    id: spin.id,
    gameId: spin.gameId,
    externalPlayerId: spin.externalPlayerId,
    wagerMicros: spin.wagerMicros,
    prizeTier: spin.outcome.tier,
    multiplierMillionths: spin.outcome.multiplierMillionths,
    payoutMicros: spin.payoutMicros,
    balanceAfterMicros: recorded.balanceAfterMicros,
    presentation: spin.presentation,
    createdAt: recorded.createdAt,
    position: spin.position,
  });
}

/**
 * A batch of spins (group commit), answered in the batch's order: one autocommit statement (atomic
 * on its own) when no spin has more to write, else one transaction with each spin's extras.
 */
export async function writeSpinBatch(sql: SqlPool, plans: readonly SpinPlan[]): Promise<BatchAnswer[]> {
  if (!plans.some((plan) => plan.needsTransaction)) return recordBatch(sql, plans);
  return sql.begin(async (tx) => {
    const answers = await recordBatch(tx, plans);
    await writeExtrasOf(
      tx,
      plans.flatMap((plan, i) => {
        const written = answers[i]!;
        return plan.needsTransaction && !(written instanceof Error) ? [{ plan, written }] : [];
      }),
    );
    return answers;
  });
}

/** A spin of a batch: written, or left out because its outcome's block was closed meanwhile. */
export type BatchAnswer = WrittenSpin | UnusableOutcomeError;

async function recordBatch(client: SqlClient, plans: readonly SpinPlan[]): Promise<BatchAnswer[]> {
  const recorded = await recordSpinBatch(
    client,
    plans.map((plan) => plan.spin),
  );
  return plans.map((plan, i) => writtenOrUnusable(plan, recorded[i] ?? null));
}

function writtenOrUnusable(plan: SpinPlan, recorded: RecordedSpin | null): BatchAnswer {
  if (recorded === null) return new UnusableOutcomeError(`outcome of closed block ${plan.spin.position?.blockId}`);
  return { spin: plan.spin, body: resultOf(plan.spin, recorded), largeWin: plan.largeWin, generationNeeded: false };
}

/** After a write whose commit went unanswered: the spin as committed, or null when it did not commit. */
export async function committedWrite(sql: SqlPool, plan: SpinPlan): Promise<WrittenSpin | null> {
  const recorded = await findRecordedSpin(sql, plan.spin.id);
  if (!recorded) return null;
  return { spin: plan.spin, body: resultOf(plan.spin, recorded), largeWin: plan.largeWin, generationNeeded: false };
}

/**
 * The spin and everything that goes with it, in the caller's transaction. The rare extras (a large
 * win, a block's first or last outcome) are repository statements on the same transaction.
 */
export async function writeSpin(tx: SqlTransaction, plan: SpinPlan): Promise<WrittenSpin> {
  const written = writtenOrUnusable(plan, await recordSpin(tx, plan.spin));
  if (written instanceof Error) throw written;
  if (plan.needsTransaction) await writeExtrasOf(tx, [{ plan, written }]);
  return written;
}

/**
 * The extras of spins just recorded in `tx`. Row locks come in one order in every spin transaction:
 * every player row (taken by the spins' insert), then block rows in block order, then the games
 * whose blocks started, in game order (`markBlocksProgress`), then the event counters
 * (`insertEvents`, one statement for all the events, last). A transaction outside the spin path
 * that holds a block row and then waits for a row a batch holds closes a cycle; Postgres then
 * rolls the batch back and SpinBatcher runs it again.
 */
async function writeExtrasOf(tx: SqlTransaction, spins: { plan: SpinPlan; written: WrittenSpin }[]): Promise<void> {
  const events: NewEvent[] = spins
    .filter(({ plan }) => plan.largeWin)
    .map(({ plan, written }) => largeWinEvent(plan, written.body));
  const boundaries = spins.filter(({ plan }) => plan.blockBoundary !== null);
  if (boundaries.length > 0) {
    const progress = await markBlocksProgress(
      tx,
      boundaries.map(({ plan }) => plan.blockBoundary!),
      { minReadyBlocks: boundaries[0]!.plan.minReadyBlocks },
    );
    for (const [i, { written }] of boundaries.entries()) {
      const { lowReserve, enqueueGeneration } = progress[i]!;
      if (lowReserve) events.push(lowReserve);
      written.generationNeeded = enqueueGeneration;
    }
  }
  await insertEvents(tx, events);
}

function largeWinEvent(plan: SpinPlan, body: SpinResultBody): NewEvent {
  return {
    partnerId: plan.partner.partnerId,
    environment: plan.partner.environment,
    type: "spin.large_win",
    now: new Date(body.createdAt),
    data: {
      spinId: body.spinId,
      gameId: body.gameId,
      playerId: body.playerId,
      wagerUsd: body.wagerUsd,
      payoutUsd: body.outcome.payoutUsd,
      prizeTier: body.outcome.prizeTier,
      multiplier: body.outcome.multiplier,
    },
  };
}
