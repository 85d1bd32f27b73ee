import { newId, payoutMicros, presentationOf, type QueuedOutcome } from "@outcomes/core";
import {
  drizzleTransactionOn,
  findSpinOfOutcome,
  insertEvent,
  markBlockProgress,
  type NewSpin,
  type RecordedSpin,
  recordSpin,
  recordSpinBatch,
  type SqlClient,
  type SqlPool,
  type SqlTransaction,
  type Transaction,
} from "@outcomes/db";
import type { PartnerAuth } from "../context.js";
import type { GameRules } from "./game-cache.js";
import { type SpinResultBody, spinResultBody } from "./spin-result.js";

/** Everything the write of one spin needs, decided before any statement is sent. */
export interface SpinPlan {
  spin: NewSpin;
  partner: PartnerAuth;
  /** Payout at or over the game's threshold: a `spin.large_win` event goes with the spin. */
  largeWin: boolean;
  /** The first or last outcome of its block: the block's status (and the reserve) change. */
  blockBoundary: boolean;
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
  outcome: QueuedOutcome;
  blockSize: number;
  minReadyBlocks: number;
}): SpinPlan {
  const { partner, game, outcome } = input;
  const payout = payoutMicros(input.wagerMicros, outcome.multiplierMillionths);
  const largeWin = payout > 0 && payout >= game.largeWinThresholdMicros;
  const blockBoundary = outcome.index === 0 || outcome.index + 1 >= input.blockSize;
  return {
    spin: {
      id: newId("spn"),
      partnerId: partner.partnerId,
      environment: partner.environment,
      gameId: game.id,
      externalPlayerId: input.playerId,
      outcome,
      wagerMicros: input.wagerMicros,
      payoutMicros: payout,
      presentation: presentationOf(outcome),
    },
    partner,
    largeWin,
    blockBoundary,
    minReadyBlocks: input.minReadyBlocks,
    needsTransaction: largeWin || blockBoundary,
  };
}

function resultOf(spin: NewSpin, recorded: RecordedSpin): SpinResultBody {
  return spinResultBody({
    id: spin.id,
    gameId: spin.gameId,
    externalPlayerId: spin.externalPlayerId,
    wagerMicros: spin.wagerMicros,
    prizeTier: spin.outcome.tier,
    multiplierMillionths: spin.outcome.multiplierMillionths,
    payoutMicros: spin.payoutMicros,
    balanceAfterMicros: recorded.balanceAfterMicros,
    presentation: spin.presentation,
    fairness: { blockId: spin.outcome.blockId, index: spin.outcome.index },
    createdAt: recorded.createdAt,
  });
}

/**
 * A batch of spins (group commit), answered in the batch's order: one autocommit statement (atomic
 * on its own) when no spin has more to write, else one transaction with each spin's extras.
 */
export async function writeSpinBatch(sql: SqlPool, plans: readonly SpinPlan[]): Promise<WrittenSpin[]> {
  if (!plans.some((plan) => plan.needsTransaction)) return recordBatch(sql, plans);
  return sql.begin(async (tx) => {
    const written = await recordBatch(tx, plans);
    const extras = plans.flatMap((plan, i) =>
      plan.needsTransaction ? [{ plan, spin: written[i] as WrittenSpin }] : [],
    );
    // Block rows are locked in block order, after every player row: batches cannot deadlock.
    extras.sort(
      (a, b) =>
        a.plan.spin.outcome.blockId - b.plan.spin.outcome.blockId ||
        a.plan.spin.outcome.index - b.plan.spin.outcome.index,
    );
    const txDb = drizzleTransactionOn(tx);
    for (const { plan, spin } of extras) spin.generationNeeded = await writeExtras(txDb, plan, spin.body);
    return written;
  });
}

async function recordBatch(client: SqlClient, plans: readonly SpinPlan[]): Promise<WrittenSpin[]> {
  const recorded = await recordSpinBatch(
    client,
    plans.map((plan) => plan.spin),
  );
  return plans.map((plan, i) => ({
    spin: plan.spin,
    body: resultOf(plan.spin, recorded[i] as RecordedSpin),
    largeWin: plan.largeWin,
    generationNeeded: false,
  }));
}

/**
 * After a write whose commit went unanswered: the spin as committed, when the outcome's unique key
 * holds this very spin; null when the outcome is unused or another spin's.
 */
export async function committedWrite(sql: SqlPool, plan: SpinPlan): Promise<WrittenSpin | null> {
  const recorded = await findSpinOfOutcome(sql, plan.spin.outcome);
  if (recorded?.id !== plan.spin.id) return null;
  return { spin: plan.spin, body: resultOf(plan.spin, recorded), largeWin: plan.largeWin, generationNeeded: false };
}

/**
 * The spin and everything that goes with it, in the caller's transaction. The rare extras (a large
 * win, a block's first or last outcome) go through the drizzle repositories on the same transaction.
 */
export async function writeSpin(tx: SqlTransaction, plan: SpinPlan): Promise<WrittenSpin> {
  const body = resultOf(plan.spin, await recordSpin(tx, plan.spin));
  const generationNeeded = plan.needsTransaction ? await writeExtras(drizzleTransactionOn(tx), plan, body) : false;
  return { spin: plan.spin, body, largeWin: plan.largeWin, generationNeeded };
}

/** The large-win event and the block's bookkeeping; true when generation should be asked for. */
async function writeExtras(txDb: Transaction, plan: SpinPlan, body: SpinResultBody): Promise<boolean> {
  if (plan.largeWin) {
    await insertEvent(txDb, {
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
    });
  }
  if (!plan.blockBoundary) return false;
  const progress = await markBlockProgress(txDb, plan.spin.outcome, { minReadyBlocks: plan.minReadyBlocks });
  return progress.enqueueGeneration;
}
