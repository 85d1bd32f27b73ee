import {
  ErrorCode,
  newId,
  type Outcome,
  type OutcomePosition,
  payoutMicros,
  presentationOf,
  ServiceError,
} from "@outcomes/core";
import {
  type FreeRoundRefusal,
  findRecordedSpin,
  insertEvents,
  isLeftOut,
  type LeftOutSpin,
  lockAndFindIdempotencyRecords,
  markBlocksProgress,
  type NewEvent,
  type NewSpin,
  type RecordedSpin,
  recordSpinBatch,
  type SqlClient,
  type SqlPool,
  type SqlTransaction,
  saveIdempotencyRecords,
} from "@outcomes/db";
import { presentSpin, type SpinResultBody } from "@outcomes/records";
import type { PartnerAuth } from "../auth/key-verifier.js";
import type { GameRules } from "./game-cache.js";
import { type IdempotentRequest, replayOf } from "./idempotency.js";
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
  /** Sent with `Idempotency-Key`: its record is saved with the spin, under the key's lock. */
  key?: IdempotentRequest;
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
  /** The grant whose round the spin uses; null for a paid spin. */
  freeRoundsId: string | null;
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
      freeRoundsId: input.freeRoundsId,
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
    voided: null,
    freeRound:
      spin.freeRoundsId === null ? null : { freeRoundsId: spin.freeRoundsId, roundsLeft: recorded.roundsLeft ?? 0 },
  });
}

/**
 * A batch of spins (group commit), answered in the batch's order: one autocommit statement (atomic
 * on its own) when no spin has more to write, else one transaction. In it, the keyed spins' keys
 * are locked and their records read first (a key whose first request committed meanwhile is
 * answered from its record, and its spin not written), then the spins, their extras, and the
 * keyed spins' records: a key costs one row, not a transaction. A batch never holds one key twice
 * (`SpinBatcher`).
 */
export async function writeSpinBatch(sql: SqlPool, plans: readonly SpinPlan[]): Promise<BatchAnswer[]> {
  if (!plans.some((plan) => plan.needsTransaction || plan.key)) return recordBatch(sql, plans);
  return sql.begin(async (tx) => {
    const answers = await answeredByKeys(tx, plans);
    const toWrite = plans.flatMap((_, i) => (answers[i] === undefined ? [i] : []));
    const written = await recordBatch(
      tx,
      toWrite.map((i) => plans[i]!),
    );
    for (const [j, i] of toWrite.entries()) answers[i] = written[j]!;
    const committed = plans.flatMap((plan, i) => {
      const answer = answers[i];
      return answer && isWritten(answer) ? [{ plan, written: answer }] : [];
    });
    await writeExtrasOf(
      tx,
      committed.filter(({ plan }) => plan.needsTransaction),
    );
    await saveIdempotencyRecords(
      tx,
      committed.flatMap(({ plan, written }) =>
        plan.key ? [{ scope: plan.key.scope, requestHash: plan.key.hash, responseBody: written.body }] : [],
      ),
    );
    return answers as BatchAnswer[];
  });
}

/** A spin of a batch: written; answered from its key's first request; or refused (its error). */
export type BatchAnswer = WrittenSpin | { replayed: SpinResultBody } | Error;

export const isWritten = (answer: BatchAnswer): answer is WrittenSpin => "spin" in answer;

/** The keyed spins whose key has a live record (their first request committed): its result, or KS-4101. */
async function answeredByKeys(tx: SqlTransaction, plans: readonly SpinPlan[]): Promise<(BatchAnswer | undefined)[]> {
  const answers: (BatchAnswer | undefined)[] = plans.map(() => undefined);
  const keyed = plans.flatMap((plan, i) => (plan.key ? [{ i, key: plan.key }] : []));
  if (keyed.length === 0) return answers;
  const records = await lockAndFindIdempotencyRecords(
    tx,
    keyed.map(({ key }) => key.scope),
  );
  for (const [j, { i, key }] of keyed.entries()) {
    const record = records[j];
    if (!record) continue;
    try {
      answers[i] = { replayed: replayOf(key, record) };
    } catch (error) {
      answers[i] = error as Error;
    }
  }
  return answers;
}

async function recordBatch(client: SqlClient, plans: readonly SpinPlan[]): Promise<BatchAnswer[]> {
  if (plans.length === 0) return [];
  const recorded = await recordSpinBatch(
    client,
    plans.map((plan) => plan.spin),
  );
  return plans.map((plan, i) => writtenOrUnusable(plan, recorded[i]!));
}

function writtenOrUnusable(plan: SpinPlan, recorded: RecordedSpin | LeftOutSpin): WrittenSpin | Error {
  if (isLeftOut(recorded)) {
    const { leftOut } = recorded;
    if (leftOut === "closed_block")
      return new UnusableOutcomeError(`outcome of closed block ${plan.spin.position?.blockId}`);
    return freeRoundUnavailable(leftOut);
  }
  return { spin: plan.spin, body: resultOf(plan.spin, recorded), largeWin: plan.largeWin, generationNeeded: false };
}

const FREE_ROUND_REFUSALS: Record<FreeRoundRefusal, string> = {
  no_round_left: "the player has no round of this grant left",
  expired: "the grant has expired",
  cancelled: "the grant was cancelled",
  not_in_grant: "the player is not in the grant",
};

/** 409 KS-4218, saying which way the round is not available (CONTRACT §14); nothing was used or written. */
export function freeRoundUnavailable(reason: FreeRoundRefusal | "another_game", gameId?: number): ServiceError {
  const why = reason === "another_game" ? `the grant is for game ${gameId}, not this one` : FREE_ROUND_REFUSALS[reason];
  return new ServiceError(ErrorCode.FreeRoundUnavailable, {
    message: `Free round not available: ${why}; nothing was used or written`,
    details: [{ path: "freeRoundsId", message: why }],
  });
}

/** After a write whose commit went unanswered: the spin as committed, or null when it did not commit. */
export async function committedWrite(sql: SqlPool, plan: SpinPlan): Promise<WrittenSpin | null> {
  const recorded = await findRecordedSpin(sql, plan.spin.id);
  if (!recorded) return null;
  return { spin: plan.spin, body: resultOf(plan.spin, recorded), largeWin: plan.largeWin, generationNeeded: false };
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
