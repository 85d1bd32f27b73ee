import { ErrorCode, ServiceError } from "@outcomes/core";
import { type IdempotencyRecord, type IdempotencyScope, mayHaveCommitted, type NewSpin } from "@outcomes/db";
import type { Logger } from "@outcomes/runtime";
import type { PartnerAuth } from "../auth/key-verifier.js";
import { type IdempotentRequest, keyedSpin, replayOf } from "../idempotency.js";
import type { Decision } from "../ratelimit/index.js";
import type { FreeRoundTerms } from "./free-round-cache.js";
import type { GameRules } from "./game-cache.js";
import type { GroupCommit } from "./group-commit.js";
import { type OutcomeTaker, queueEmpty, type TakenOutcome, UnusableOutcomeError } from "./outcome-taker.js";
import { PROTECTION_CODES } from "./protection-refusal.js";
import { checkRequest, orderUnderRules, type SpinOrder, type SpinRequest } from "./spin-order.js";
import type { SpinPlan, SpinPlanner } from "./spin-plan.js";
import type { SpinDone } from "./write-spins.js";

/**
 * A spin's answer, with the spin bucket's decision (null when the request ended before it drew:
 * the route draws then, so every request counts once).
 */
export type SpinAnswer =
  | { spun: SpinDone; decision: Decision | null }
  | { failed: ServiceError; decision: Decision | null }
  | { overLimit: Decision };

/** What the pipeline works with; buildApi wires the process's own, the unit tests fakes. */
export interface SpinServiceDeps {
  games: { get(gameId: number): Promise<GameRules | null> };
  freeRounds: { get(grantId: string): Promise<FreeRoundTerms | null> };
  taker: Pick<OutcomeTaker, "take" | "admitOnly" | "takeAgain" | "giveBack">;
  planner: Pick<SpinPlanner, "plan">;
  commits: Pick<GroupCommit, "commit" | "recorded">;
  /** Whether spins of checked partners are checked now (the `jurisdictions` release gate). */
  checksOn(): Promise<boolean>;
  /** A key's record, read when a keyed spin fails before its batch could answer it from there. */
  findRecord(scope: IdempotencyScope): Promise<IdempotencyRecord | null>;
  /** Sent after a commit, never inside it: they only shorten other processes' waits, or count. */
  signals: {
    eventsWritten(): void;
    generationNeeded(gameId: number): Promise<void>;
    spinCommitted(spin: NewSpin): void;
    /** A spin its player's protection refused (KS-4220..4222, KS-4293), counted for the day's report. */
    spinRefused(partner: PartnerAuth, code: ErrorCode): void;
  };
  logger: Logger;
}

/** A failure of the commit stage (or of the look-up after its lost reply): the spin was not written. */
class CommitFailure extends Error {
  constructor(override readonly cause: unknown) {
    super("spin commit failed");
  }
}

/**
 * An outcome that can never be recorded (already used, unreadable, of a block never sealed or
 * closed) only appears after a failure whose commit in fact went through, or a queue rebuilt from
 * stale data. Each is dropped and the next one taken, up to this many per request.
 */
const MAX_UNUSABLE_SKIPPED = 20;

/**
 * The spin pipeline, top to bottom: admit (the request's own checks, then its game's rules), take
 * (the spin bucket's draw with the game's next outcome, one script call per turn), plan, commit (the
 * group commit), answer. An outcome that turns out unusable is dropped and the next one planned and
 * committed in its place. Anything that fails after the take gives the outcome back to the front of
 * its queue and answers KS-5003, with nothing deducted. A keyed spin that fails is answered from its
 * key's record when its first request committed: a replay stands whatever the game says now.
 */
export class SpinService {
  constructor(private readonly deps: SpinServiceDeps) {}

  async spin(partner: PartnerAuth, request: SpinRequest, idempotencyKey?: string): Promise<SpinAnswer> {
    let grant: FreeRoundTerms | null;
    try {
      grant = await this.grantOf(request);
      checkRequest(partner, request, grant);
    } catch (error) {
      return { failed: this.failure(error, request.gameId), decision: null };
    }
    const key = idempotencyKey === undefined ? null : keyedSpin(partner, request, idempotencyKey);
    let decision: Decision | null = null;
    try {
      // The fast path: a partner whose spins are not checked never waits for the gate.
      const checked = partner.checked === true && (await this.deps.checksOn());
      const order = orderUnderRules(partner, request, await this.gameOf(request.gameId), grant, checked);
      const taken =
        order.forceTier === null ? await this.deps.taker.take(order.game) : await this.deps.taker.admitOnly(order.game);
      decision = taken.decision;
      if (!decision.admitted) return { overLimit: decision };
      const done = await this.spinFrom(order, taken.outcome, key);
      this.signal(done);
      return { spun: done, decision };
    } catch (error) {
      const replay = key && !(error instanceof CommitFailure) ? await this.replayAfterFailure(key, decision) : null;
      const cause = error instanceof CommitFailure ? error.cause : error;
      if (replay) return replay;
      const failed = this.failure(cause, request.gameId);
      if ((PROTECTION_CODES as readonly ErrorCode[]).includes(failed.code))
        this.deps.signals.spinRefused(partner, failed.code);
      return { failed, decision };
    }
  }

  /** Plan and commit, outcome after outcome until one is usable (a forced spin takes none). */
  private async spinFrom(
    order: SpinOrder,
    first: TakenOutcome | null,
    key: IdempotentRequest | null,
  ): Promise<SpinDone> {
    let taken = first;
    for (let skipped = 0; ; skipped++) {
      if (order.forceTier === null) {
        if (taken === null) throw queueEmpty();
        // That was the list's last outcome: ask for generation now rather than at the next spin's KS-4203.
        if (taken.remaining === 0) void this.deps.signals.generationNeeded(order.game.id);
      }
      const done = await this.planAndCommit(order, taken, key);
      if (done) return done;
      if (skipped === MAX_UNUSABLE_SKIPPED) {
        throw new ServiceError(ErrorCode.SpinFailed, {
          message: "Spin processing failed (wager not deducted): no usable outcome",
        });
      }
      taken = await this.deps.taker.takeAgain(order.game);
    }
  }

  /** One outcome planned and committed; null when it turned out unusable (dropped, never given back). */
  private async planAndCommit(
    order: SpinOrder,
    taken: TakenOutcome | null,
    key: IdempotentRequest | null,
  ): Promise<SpinDone | null> {
    let plan: SpinPlan | undefined;
    try {
      plan = await this.deps.planner.plan(order, taken, key);
      const done = await this.deps.commits.commit(plan);
      // Its first request committed while this one took an outcome: that outcome is unused.
      if (done.replayed && taken) await this.giveBack(taken, order.game.id);
      return done;
    } catch (error) {
      if (error instanceof UnusableOutcomeError) {
        this.deps.logger.error({ err: error, gameId: order.game.id }, "dropped an outcome that cannot be used");
        return null;
      }
      if (plan === undefined) {
        if (taken) await this.giveBack(taken, order.game.id);
        throw error;
      }
      return this.afterFailedCommit(error, plan, taken, order.game.id);
    }
  }

  /**
   * A commit that failed: the spin as committed when only its reply was lost; otherwise the outcome
   * goes back. Either failure is a CommitFailure: the commit read the key's record under its lock,
   * so it is not looked up again.
   */
  private async afterFailedCommit(
    error: unknown,
    plan: SpinPlan,
    taken: TakenOutcome | null,
    gameId: number,
  ): Promise<SpinDone> {
    const found = mayHaveCommitted(error) ? await this.committedAfterLostReply(error, plan) : null;
    if (found) return found;
    if (taken) await this.giveBack(taken, gameId);
    throw new CommitFailure(error);
  }

  private async gameOf(gameId: number): Promise<GameRules | null> {
    try {
      return await this.deps.games.get(gameId);
    } catch (error) {
      this.deps.logger.error({ err: error, gameId }, "spin failed: game look-up");
      throw new ServiceError(ErrorCode.SpinFailed, { cause: error });
    }
  }

  private async grantOf(request: SpinRequest): Promise<FreeRoundTerms | null> {
    if (request.freeRoundsId == null) return null;
    try {
      return await this.deps.freeRounds.get(request.freeRoundsId);
    } catch (error) {
      this.deps.logger.error({ err: error }, "spin failed: free-round grant look-up");
      throw new ServiceError(ErrorCode.SpinFailed, { cause: error });
    }
  }

  /**
   * A failure with no answer to the write or its COMMIT (the connection went away after sending)
   * may hide a committed spin: before answering KS-5003 ("not deducted"), look the spin up by its
   * id and answer its result if it stands. When even the look-up fails, the spin's fate is unknown,
   * and the KS-5003 (a CommitFailure) says so.
   */
  private async committedAfterLostReply(error: unknown, plan: SpinPlan): Promise<SpinDone | null> {
    try {
      const found = await this.deps.commits.recorded(plan);
      if (found) this.deps.logger.warn({ err: error, spinId: plan.spin.id }, "spin committed despite a lost reply");
      return found;
    } catch (lookupError) {
      this.deps.logger.error({ err: lookupError, spinId: plan.spin.id }, "spin outcome unknown after a lost reply");
      throw new CommitFailure(
        new ServiceError(ErrorCode.SpinFailed, {
          message:
            "Spin processing failed: the database did not confirm whether the spin was recorded. Retry with the " +
            "same Idempotency-Key, or read the player's spins, before spinning again",
          cause: error,
        }),
      );
    }
  }

  /** The first request's answer when it committed (KS-4101 when its body differs); null when none is kept. */
  private async replayAfterFailure(key: IdempotentRequest, decision: Decision | null): Promise<SpinAnswer | null> {
    const record = await this.deps.findRecord(key.scope).catch(() => null);
    if (!record) return null;
    try {
      return { spun: { body: replayOf(key, record), replayed: true, wrote: null }, decision };
    } catch (error) {
      return { failed: error as ServiceError, decision };
    }
  }

  private signal(done: SpinDone): void {
    if (!done.wrote) return;
    const { spin, largeWin, generationNeeded } = done.wrote;
    if (largeWin) this.deps.signals.eventsWritten();
    if (generationNeeded) void this.deps.signals.generationNeeded(spin.gameId);
    this.deps.signals.spinCommitted(spin);
  }

  private async giveBack(taken: TakenOutcome, gameId: number): Promise<void> {
    await this.deps.taker.giveBack(taken).catch((pushError: unknown) => {
      // The outcome stays unserved in its sealed block in Postgres, from where queues are rebuilt.
      this.deps.logger.error({ err: pushError, gameId }, "outcome give-back failed");
    });
  }

  /** The failure as the partner is told it: a ServiceError as thrown, anything else KS-5003. */
  private failure(error: unknown, gameId: number): ServiceError {
    if (error instanceof ServiceError) {
      if (error.code === ErrorCode.OutcomeQueueEmpty) void this.deps.signals.generationNeeded(gameId);
      return error;
    }
    this.deps.logger.error({ err: error, gameId }, "spin failed");
    return new ServiceError(ErrorCode.SpinFailed, { cause: error });
  }
}
