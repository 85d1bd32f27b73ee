import { findIdempotencyRecord, type SqlClient, type SqlPool } from "@outcomes/db";
import type { SpinResultBody } from "@outcomes/records";
import { type IdempotentRequest, replayOf } from "./idempotency.js";
import { UnusableOutcomeError } from "./outcome-queue.js";
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
 * Every spin, keyed or not, commits with the others arriving within a few ms (`SpinBatcher`). A
 * keyed spin costs no round trip more than a plain one: it joins a batch with its key, and the
 * batch takes the key's lock and reads the record (a request seen before, or a first request still
 * running when this one arrived and committed by then, is answered from it: its outcome goes back)
 * and saves the spin's record with the spin. A replay answers its first result whatever the game,
 * the wager bounds or the queue say now: when planning fails, the key's record is read, and a
 * request seen before is answered from it. Over the spin rate limit a replay is refused (KS-4291),
 * as every release refuses it.
 */
export class GroupCommitter implements SpinCommitter {
  constructor(
    private readonly sql: SqlPool,
    private readonly batcher: SpinBatcher,
  ) {}

  async commit(prepare: PrepareSpin, key?: IdempotentRequest): Promise<Committed> {
    let plan: SpinPlan | null;
    try {
      plan = await prepare(this.sql);
    } catch (error) {
      // An unusable outcome is dropped and the next one taken (the spin service's loop): the
      // batch answers a replay then, and the outcome it gives back is a usable one.
      const prior = key && !(error instanceof UnusableOutcomeError) && (await this.replay(key));
      if (prior) return prior;
      throw error;
    }
    // The spin bucket refused: a replay is refused as any spin request over the limit is.
    if (plan === null) return { refused: true };
    if (key) plan.key = key;
    const answer = await this.batcher.submit(plan);
    return "replayed" in answer ? answer : { written: answer };
  }

  private async replay(key: IdempotentRequest): Promise<Committed | undefined> {
    const prior = await findIdempotencyRecord(this.sql, key.scope);
    return prior ? { replayed: replayOf(key, prior) } : undefined;
  }

  /** The spin and its key's record commit together, so a spin found here is also what a retry replays. */
  recorded(plan: SpinPlan): Promise<WrittenSpin | null> {
    return committedWrite(this.sql, plan);
  }
}
