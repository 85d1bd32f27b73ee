import { findIdempotencyRecord, type SqlClient, type SqlPool } from "@outcomes/db";
import type { SpinResultBody } from "@outcomes/records";
import { type IdempotentRequest, replayOf } from "./idempotency.js";
import type { SpinBatcher } from "./spin-batcher.js";
import { committedWrite, type SpinPlan, type WrittenSpin } from "./spin-writer.js";

/**
 * Plans a spin on `client` (applies the game's rules, takes the outcome, reads what the plan needs),
 * or answers null when the spin bucket refused: nothing is written then.
 */
export type PrepareSpin = (client: SqlClient) => Promise<SpinPlan | null>;

export type Committed = { written: WrittenSpin } | { replayed: SpinResultBody } | { refused: true };

/** Where a planned spin is committed, and how a spin whose commit went unanswered is found. */
export interface SpinCommitter {
  commit(prepare: PrepareSpin, key?: IdempotentRequest): Promise<Committed>;
  /** After a failure that left no answer (the connection went away): the spin as committed, or null. */
  recorded(plan: SpinPlan): Promise<WrittenSpin | null>;
}

/**
 * Every spin, keyed or not, commits with the others arriving within a few ms (`SpinBatcher`). With
 * an `Idempotency-Key`, the key's record is read first, without its lock: a request seen before is
 * answered from it, before the game's rules (a replay returns the first result even if the game
 * has changed since) and before any outcome is taken. Otherwise the spin joins a batch with its
 * key; the batch takes the key's lock and reads the record again (a first request still running
 * when this one arrived has committed by then: this one is answered from it), and saves the
 * spin's record with the spin.
 */
export class GroupCommitter implements SpinCommitter {
  constructor(
    private readonly sql: SqlPool,
    private readonly batcher: SpinBatcher,
  ) {}

  async commit(prepare: PrepareSpin, key?: IdempotentRequest): Promise<Committed> {
    if (key) {
      const prior = await findIdempotencyRecord(this.sql, key.scope);
      if (prior) return { replayed: replayOf(key, prior) };
    }
    const plan = await prepare(this.sql);
    if (plan === null) return { refused: true };
    if (key) plan.key = key;
    const answer = await this.batcher.submit(plan);
    return "replayed" in answer ? answer : { written: answer };
  }

  /** The spin and its key's record commit together, so a spin found here is also what a retry replays. */
  recorded(plan: SpinPlan): Promise<WrittenSpin | null> {
    return committedWrite(this.sql, plan);
  }
}
