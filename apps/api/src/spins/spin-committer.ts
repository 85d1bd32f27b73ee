import { type SqlClient, type SqlPool, saveIdempotencyRecord } from "@outcomes/db";
import { replayedBody, type SpinResultBody } from "@outcomes/records";
import { type IdempotentRequest, priorResponse } from "./idempotency.js";
import type { SpinBatcher } from "./spin-batcher.js";
import { committedWrite, type SpinPlan, type WrittenSpin, writeSpin } from "./spin-writer.js";

/**
 * Plans a spin on `client` (applies the game's rules, takes the outcome, reads what the plan needs),
 * or answers null when the spin bucket refused: nothing is written then.
 */
export type PrepareSpin = (client: SqlClient) => Promise<SpinPlan | null>;

export type Committed = { written: WrittenSpin } | { replayed: SpinResultBody } | { refused: true };

/**
 * Where a planned spin is committed. Plain spins go to the group commit (`GroupCommitter`); a spin
 * with an `Idempotency-Key` to a transaction of its own with the key's record (`KeyedCommitter`).
 */
export interface SpinCommitter {
  commit(prepare: PrepareSpin, key?: IdempotentRequest): Promise<Committed>;
  /** After a failure that left no answer (the connection went away): the spin as committed, or null. */
  recorded(plan: SpinPlan): Promise<WrittenSpin | null>;
}

/** Plain spins: planned on the pool, then committed with the others of their batch (see `SpinBatcher`). */
export class GroupCommitter implements SpinCommitter {
  constructor(
    private readonly sql: SqlPool,
    private readonly batcher: SpinBatcher,
  ) {}

  async commit(prepare: PrepareSpin): Promise<Committed> {
    const plan = await prepare(this.sql);
    if (plan === null) return { refused: true };
    return { written: await this.batcher.submit(plan) };
  }

  recorded(plan: SpinPlan): Promise<WrittenSpin | null> {
    return committedWrite(this.sql, plan);
  }
}

/**
 * With `Idempotency-Key`: the key's lock and look-up come first, in the transaction that then
 * plans the spin and commits it with the key's record, so a duplicate waits and replays. A replay
 * returns the first result even if the game has changed since (made inactive, re-priced): `prepare`
 * applies the rules only after the look-up found no first response.
 *
 * Every statement of the transaction runs on its own connection: whatever `prepare` reads goes on
 * `client`. A transaction that waited for a second connection of the pool would deadlock the process
 * once every connection held one.
 */
export class KeyedCommitter implements SpinCommitter {
  constructor(private readonly sql: SqlPool) {}

  async commit(prepare: PrepareSpin, key?: IdempotentRequest): Promise<Committed> {
    if (!key) throw new Error("a keyed spin needs its Idempotency-Key");
    return this.sql.begin(async (tx): Promise<Committed> => {
      const prior = await priorResponse(tx, key);
      if (prior !== null) return { replayed: replayedBody(prior) };
      const plan = await prepare(tx);
      if (plan === null) return { refused: true };
      const written = await writeSpin(tx, plan);
      await saveIdempotencyRecord(tx, key.scope, {
        requestHash: key.hash,
        responseStatus: 200,
        responseBody: written.body,
      });
      return { written };
    });
  }

  /** The spin and its key's record commit together, so a spin found here is also what a retry replays. */
  recorded(plan: SpinPlan): Promise<WrittenSpin | null> {
    return committedWrite(this.sql, plan);
  }
}
