import {
  findRecordedSpin,
  type IdempotencyRecord,
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
import { type IdempotentRequest, replayOf } from "../idempotency.js";
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
 * on its own) when no spin has more to write, else one transaction (`writeInTransaction`). A batch
 * never holds one key twice.
 */
export async function writeSpins(
  sql: SqlPool,
  plans: readonly SpinPlan[],
  minReadyBlocks: number,
): Promise<Array<SpinDone | Error>> {
  if (!plans.some((plan) => plan.needsTransaction || plan.key)) return recordBatch(sql, plans);
  const answers: Array<SpinDone | Error | undefined> = plans.map(() => undefined);
  let toWrite = plans.map((_, i) => i);
  while (toWrite.length > 0) {
    const written = await writeInTransaction(
      sql,
      toWrite.map((i) => plans[i]!),
      minReadyBlocks,
    );
    // Keys whose first request committed while this batch waited for their locks: those spins are
    // answered from their records and the others written again (each run answers at least one).
    const next: number[] = [];
    for (const [j, i] of toWrite.entries()) {
      const answer = written instanceof AnsweredByKeys ? written.answers[j] : written[j];
      if (answer === undefined) next.push(i);
      else answers[i] = answer;
    }
    toWrite = next;
  }
  return answers as Array<SpinDone | Error>;
}

/** A transaction rolled back because some of its keys had records: their answers (the rest undefined). */
class AnsweredByKeys {
  constructor(readonly answers: Array<SpinDone | Error | undefined>) {}
}

/**
 * The batch in one transaction of three round trips, its statements pipelined (Postgres runs them
 * in the order sent, and an error aborts the transaction, so what follows it does nothing):
 * 1. BEGIN;
 * 2. the keyed spins' locks, their records read after the locks, and the spins;
 * 3. the extras' events and the keyed spins' records, sent with COMMIT. After an error among them
 *    COMMIT answers ROLLBACK, so their own answers say whether the batch committed.
 * A block boundary (once a block) marks its block between 2 and 3. The spins are written before
 * the keys' records are known: a key with a record (a first request that committed while this one
 * waited for the lock, rare, as a repeat of a committed request is answered before the commit
 * stage) rolls the transaction back.
 */
async function writeInTransaction(
  sql: SqlPool,
  plans: readonly SpinPlan[],
  minReadyBlocks: number,
): Promise<Array<SpinDone | Error> | AnsweredByKeys> {
  let last: Promise<unknown[]> = Promise.resolve([]);
  try {
    const answers = await sql.begin(async (tx) => {
      const keyed = plans.flatMap((plan, i) => (plan.key ? [{ i, key: plan.key }] : []));
      const scopes = keyed.map(({ key }) => key.scope);
      const [records, written] = await Promise.allSettled([
        scopes.length > 0 ? lockAndFindIdempotencyRecords(tx, scopes) : [],
        recordBatch(tx, plans),
      ]);
      if (records.status === "rejected") throw records.reason;
      const replays = answeredByKeys(plans, keyed, records.value);
      if (replays) throw replays;
      if (written.status === "rejected") throw written.reason;
      const committed = plans.flatMap((plan, i) => {
        const answer = written.value[i]!;
        return answer instanceof Error ? [] : [{ plan, done: answer }];
      });
      const events = await extraEvents(
        tx,
        committed.filter(({ plan }) => plan.needsTransaction),
        minReadyBlocks,
      );
      // Not awaited here: sent now, ahead of the COMMIT postgres.js sends when this function returns.
      last = settledInOrder([insertEvents(tx, events), saveIdempotencyRecords(tx, keyRecords(committed))]);
      last.catch(() => undefined); // awaited below, once COMMIT has answered
      return written.value;
    });
    await last;
    return answers;
  } catch (error) {
    if (error instanceof AnsweredByKeys) return error;
    // The error that aborted the transaction, not COMMIT's or the failed statement's followers'.
    await last;
    throw error;
  }
}

/** Settles when all have; rejects with the first rejection in the given order (the statement that failed first). */
async function settledInOrder(promises: Array<Promise<unknown>>): Promise<unknown[]> {
  const results = await Promise.allSettled(promises);
  for (const result of results) if (result.status === "rejected") throw result.reason;
  return results.map((result) => (result as PromiseFulfilledResult<unknown>).value);
}

/** The keyed spins whose key has a live record: its result, or KS-4101 for another request; null when none has. */
function answeredByKeys(
  plans: readonly SpinPlan[],
  keyed: ReadonlyArray<{ i: number; key: IdempotentRequest }>,
  records: ReadonlyArray<IdempotencyRecord | null>,
): AnsweredByKeys | null {
  if (!records.some((record) => record !== null)) return null;
  const answers: Array<SpinDone | Error | undefined> = plans.map(() => undefined);
  for (const [j, { i, key }] of keyed.entries()) {
    const record = records[j];
    if (!record) continue;
    try {
      answers[i] = { body: replayOf(key, record), replayed: true, wrote: null };
    } catch (error) {
      answers[i] = error as Error;
    }
  }
  return new AnsweredByKeys(answers);
}

const keyRecords = (committed: ReadonlyArray<{ plan: SpinPlan; done: SpinDone }>) =>
  committed.flatMap(({ plan, done }) =>
    plan.key
      ? [{ scope: plan.key.scope, requestHash: plan.key.hash, responseStatus: 200, responseBody: done.body }]
      : [],
  );

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
 * The extras of spins just recorded in `tx`: the blocks they start or end marked, and the events to
 * store. Row locks come in one order in every spin transaction: every player row (taken by the
 * spins' insert), then block rows in block order, then the games whose blocks started, in game order
 * (`markBlocksProgress`), then the event counters (`insertEvents`, one statement for all the events,
 * last). A transaction outside the spin path that holds a block row and then waits for a row a batch
 * holds closes a cycle; Postgres then rolls the batch back and the group commit runs it again.
 */
async function extraEvents(
  tx: SqlTransaction,
  spins: Array<{ plan: SpinPlan; done: SpinDone }>,
  minReadyBlocks: number,
): Promise<NewEvent[]> {
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
  return events;
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
