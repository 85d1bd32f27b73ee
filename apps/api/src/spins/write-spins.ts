import {
  findRecordedSpin,
  insertEvents,
  isLeftOut,
  type LeftOutSpin,
  lockAndFindIdempotencyRecords,
  markBlocksProgress,
  type NewEvent,
  type NewSpin,
  type RecordedSpin,
  recordSpins,
  type SqlClient,
  type SqlPool,
  type SqlTransaction,
  saveIdempotencyRecords,
} from "@outcomes/db";
import { presentSpin, type SpinResultBody } from "@outcomes/records";
import { replayOf } from "../idempotency.js";
import { UnusableOutcomeError } from "./outcome-taker.js";
import { freeRoundUnavailable } from "./spin-order.js";
import type { SpinPlan } from "./spin-plan.js";

/** A spin's answer from the commit stage, the one shape every later stage passes on. */
export interface SpinDone {
  body: SpinResultBody;
  /** Answered from its `Idempotency-Key`'s first request: nothing was written now. */
  replayed: boolean;
  /** What was written now, for the signals sent after the commit; null for a replay. */
  wrote: { spin: NewSpin; largeWin: boolean; generationNeeded: boolean } | null;
}

/**
 * A batch of spins (group commit), answered in the batch's order: one autocommit statement (atomic
 * on its own) when no spin has more to write, else one transaction. In it, the keyed spins' keys
 * are locked and their records read first (a key whose first request committed meanwhile is
 * answered from its record, and its spin not written), then the spins, their extras, and the
 * keyed spins' records: a key costs one row, not a transaction. A batch never holds one key twice.
 */
export async function writeSpins(
  sql: SqlPool,
  plans: readonly SpinPlan[],
  minReadyBlocks: number,
): Promise<Array<SpinDone | Error>> {
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
      return answer && !(answer instanceof Error) && answer.wrote ? [{ plan, done: answer }] : [];
    });
    await writeExtras(
      tx,
      committed.filter(({ plan }) => plan.needsTransaction),
      minReadyBlocks,
    );
    await saveIdempotencyRecords(
      tx,
      committed.flatMap(({ plan, done }) =>
        plan.key
          ? [{ scope: plan.key.scope, requestHash: plan.key.hash, responseStatus: 200, responseBody: done.body }]
          : [],
      ),
    );
    return answers as Array<SpinDone | Error>;
  });
}

/** The keyed spins whose key has a live record (their first request committed): its result, or KS-4101. */
async function answeredByKeys(
  tx: SqlTransaction,
  plans: readonly SpinPlan[],
): Promise<Array<SpinDone | Error | undefined>> {
  const answers: Array<SpinDone | Error | undefined> = plans.map(() => undefined);
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
      answers[i] = { body: replayOf(key, record), replayed: true, wrote: null };
    } catch (error) {
      answers[i] = error as Error;
    }
  }
  return answers;
}

async function recordBatch(client: SqlClient, plans: readonly SpinPlan[]): Promise<Array<SpinDone | Error>> {
  if (plans.length === 0) return [];
  const recorded = await recordSpins(
    client,
    plans.map((plan) => plan.spin),
    plans.some((plan) => plan.checked),
  );
  return plans.map((plan, i) => writtenOrLeftOut(plan, recorded[i]!));
}

function writtenOrLeftOut(plan: SpinPlan, recorded: RecordedSpin | LeftOutSpin): SpinDone | Error {
  if (!isLeftOut(recorded)) return doneOf(plan, recorded);
  const { leftOut } = recorded;
  if (leftOut === "closed_block")
    return new UnusableOutcomeError(`outcome of closed block ${plan.spin.position?.blockId}`);
  return freeRoundUnavailable(leftOut);
}

function doneOf(plan: SpinPlan, recorded: RecordedSpin): SpinDone {
  return {
    body: resultOf(plan.spin, recorded),
    replayed: false,
    wrote: { spin: plan.spin, largeWin: plan.largeWin, generationNeeded: false },
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
    session: recorded.session,
  });
}

/** After a write whose commit went unanswered: the spin as committed, or null when it did not commit. */
export async function committedWrite(sql: SqlPool, plan: SpinPlan): Promise<SpinDone | null> {
  const recorded = await findRecordedSpin(sql, plan.spin.id);
  return recorded ? doneOf(plan, recorded) : null;
}

/**
 * The extras of spins just recorded in `tx`. Row locks come in one order in every spin transaction:
 * every player row (taken by the spins' insert), then block rows in block order, then the games
 * whose blocks started, in game order (`markBlocksProgress`), then the event counters
 * (`insertEvents`, one statement for all the events, last). A transaction outside the spin path
 * that holds a block row and then waits for a row a batch holds closes a cycle; Postgres then
 * rolls the batch back and the group commit runs it again.
 */
async function writeExtras(
  tx: SqlTransaction,
  spins: Array<{ plan: SpinPlan; done: SpinDone }>,
  minReadyBlocks: number,
): Promise<void> {
  const events: NewEvent[] = spins
    .filter(({ plan }) => plan.largeWin)
    .map(({ plan, done }) => largeWinEvent(plan, done.body));
  const boundaries = spins.filter(({ plan }) => plan.blockBoundary !== null);
  if (boundaries.length > 0) {
    const progress = await markBlocksProgress(
      tx,
      boundaries.map(({ plan }) => plan.blockBoundary!),
      { minReadyBlocks },
    );
    for (const [i, { done }] of boundaries.entries()) {
      const { lowReserve, enqueueGeneration } = progress[i]!;
      if (lowReserve) events.push(lowReserve);
      done.wrote!.generationNeeded = enqueueGeneration;
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
