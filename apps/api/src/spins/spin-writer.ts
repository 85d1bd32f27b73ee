import { newId, payoutMicros, presentationOf, type QueuedOutcome } from "@outcomes/core";
import {
  drizzleTransactionOn,
  insertEvent,
  markBlockProgress,
  type NewSpin,
  type RecordedSpin,
  recordSpin,
  type SqlClient,
  type SqlTransaction,
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
  /** Without an idempotency key, a spin with nothing else to write is one autocommit statement. */
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
    createdAt: recorded.createdAt,
  });
}

/** The spin alone, as one statement: balance and spin row commit together or not at all. */
export async function writeSpinAlone(client: SqlClient, plan: SpinPlan): Promise<WrittenSpin> {
  if (plan.needsTransaction) throw new Error("this spin has more to write: use writeSpin in a transaction");
  const body = resultOf(plan.spin, await recordSpin(client, plan.spin));
  return { spin: plan.spin, body, largeWin: false, generationNeeded: false };
}

/**
 * The spin and everything that goes with it, in the caller's transaction. The rare extras (a large
 * win, a block's first or last outcome) go through the drizzle repositories on the same transaction.
 */
export async function writeSpin(tx: SqlTransaction, plan: SpinPlan): Promise<WrittenSpin> {
  const body = resultOf(plan.spin, await recordSpin(tx, plan.spin));
  if (!plan.largeWin && !plan.blockBoundary) return { spin: plan.spin, body, largeWin: false, generationNeeded: false };
  const txDb = drizzleTransactionOn(tx);
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
  let generationNeeded = false;
  if (plan.blockBoundary) {
    const progress = await markBlockProgress(txDb, plan.spin.outcome, { minReadyBlocks: plan.minReadyBlocks });
    generationNeeded = progress.enqueueGeneration;
  }
  return { spin: plan.spin, body, largeWin: plan.largeWin, generationNeeded };
}
