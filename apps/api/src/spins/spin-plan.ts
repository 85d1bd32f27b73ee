import {
  newId,
  type Outcome,
  type OutcomePosition,
  parseQueueItem,
  payoutMicros,
  presentationOf,
  queueItemOutcome,
} from "@outcomes/core";
import type { NewSpin, SqlClient } from "@outcomes/db";
import type { PartnerAuth } from "../auth/key-verifier.js";
import type { IdempotentRequest } from "../idempotency.js";
import type { BlockFactsCache } from "./block-facts.js";
import type { ForcedOutcomes } from "./forced-outcomes.js";
import { type TakenOutcome, UnusableOutcomeError } from "./outcome-taker.js";
import type { SpinOrder } from "./spin-order.js";

/** Everything the write of one spin needs, decided before any statement is sent. */
export interface SpinPlan {
  spin: NewSpin;
  partner: PartnerAuth;
  /** Payout at or over the game's threshold: a `spin.large_win` event goes with the spin. */
  largeWin: boolean;
  /** The outcome's place when it is the first or last of its block: the block's status (and the reserve) change. */
  blockBoundary: OutcomePosition | null;
  /** A large win or a block boundary: more than the spin itself to write, so a transaction. */
  needsTransaction: boolean;
  /** Sent with `Idempotency-Key`: its record is saved with the spin, under the key's lock. */
  key: IdempotentRequest | null;
  /** Its player's protection is judged in the commit's statement (SpinOrder.checked). */
  checked: boolean;
}

/**
 * The plan stage: an order and its outcome (taken from the game's list, read with its block's
 * codec; or, for a forced spin, drawn from the sheet) become the spin to write. An outcome that can
 * never be recorded (unreadable, of a block never sealed) is UnusableOutcomeError: dropped, and the
 * next one taken.
 */
export class SpinPlanner {
  constructor(
    private readonly blocks: Pick<BlockFactsCache, "of">,
    private readonly forced: Pick<ForcedOutcomes, "draw">,
    private readonly sql: SqlClient,
  ) {}

  async plan(order: SpinOrder, taken: TakenOutcome | null, key: IdempotentRequest | null): Promise<SpinPlan> {
    if (taken === null)
      return planSpin(order, await this.forced.draw(order.game, order.forceTier!, this.sql), null, key);
    let position: OutcomePosition;
    let outcome: Outcome;
    let size: number;
    try {
      const item = parseQueueItem(taken.raw);
      position = { blockId: item.blockId, index: item.index };
      const block = await this.blocks.of(item.blockId, this.sql);
      if (block === null) throw new UnusableOutcomeError(`outcome of unknown block ${item.blockId}`);
      outcome = queueItemOutcome(item, block.codec);
      size = block.size;
    } catch (error) {
      if (error instanceof UnusableOutcomeError) throw error;
      throw new UnusableOutcomeError(`unreadable queue item: ${taken.raw.slice(0, 200)}`, { cause: error });
    }
    const boundary = position.index === 0 || position.index + 1 >= size ? position : null;
    return planSpin(order, outcome, { position, boundary }, key);
  }
}

function planSpin(
  order: SpinOrder,
  outcome: Outcome,
  block: { position: OutcomePosition; boundary: OutcomePosition | null } | null,
  key: IdempotentRequest | null,
): SpinPlan {
  const { partner, game } = order;
  const payout = payoutMicros(order.wagerMicros, outcome.multiplierMillionths);
  const largeWin = payout > 0 && payout >= game.largeWinThresholdMicros;
  const blockBoundary = block?.boundary ?? null;
  return {
    spin: {
      id: newId("spn"),
      partnerId: partner.partnerId,
      environment: partner.environment,
      gameId: game.id,
      externalPlayerId: order.playerId,
      outcome,
      position: block?.position ?? null,
      wagerMicros: order.wagerMicros,
      payoutMicros: payout,
      presentation: presentationOf(outcome),
      freeRoundsId: order.freeRoundsId,
    },
    partner,
    largeWin,
    blockBoundary,
    needsTransaction: largeWin || blockBoundary !== null,
    key,
    checked: order.checked,
  };
}
