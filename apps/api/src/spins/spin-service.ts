import {
  ErrorCode,
  formatScaledDecimal,
  microsToUsd,
  type Outcome,
  type OutcomePosition,
  queueItemOutcome,
  ServiceError,
} from "@outcomes/core";
import {
  type BoundedPlayerFigure,
  exceededPlayerBound,
  isDuplicateOutcome,
  mayHaveCommitted,
  type SqlClient,
} from "@outcomes/db";
import type { SpinResultBody } from "@outcomes/records";
import type { Logger } from "@outcomes/runtime";
import type { PartnerAuth } from "../auth/key-verifier.js";
import type { BucketDraw, Draw } from "../ratelimit/index.js";
import type { BlockFactsCache } from "./block-facts.js";
import type { ForcedOutcomes } from "./forced-outcomes.js";
import type { FreeRoundTerms } from "./free-round-cache.js";
import type { GameRules } from "./game-cache.js";
import { type IdempotentRequest, idempotentRequest } from "./idempotency.js";
import { type OutcomeQueue, type TakenOutcome, UnusableOutcomeError } from "./outcome-queue.js";
import type { SpinCommitter } from "./spin-committer.js";
import { freeRoundUnavailable, planSpin, type SpinPlan, type WrittenSpin } from "./spin-writer.js";
import { assertPositiveWager, exactWager, wagerMicrosWithin } from "./wager.js";

export interface SpinRequest {
  gameId: number;
  playerId: string;
  /** Required, except on a free-round spin, whose wager is its grant's (if given, it must equal it). */
  wagerUsd?: number | undefined;
  /** A free-round grant of the player's (CONTRACT §14): the spin uses one of its rounds. */
  freeRoundsId?: string | null | undefined;
  /** Sandbox only: a tier of the game's PAR sheet, shown by a random combination of it (CONTRACT §11). */
  forceTier?: string | null;
}

export interface SpinReply {
  body: SpinResultBody;
  /** True when an `Idempotency-Key` replay returned the first request's result. */
  replayed: boolean;
}

/** What the spin path works with; buildApi wires the process's own, the unit tests fakes. */
export interface SpinServiceDeps {
  games: { get(gameId: number): Promise<GameRules | null> };
  freeRounds: { get(grantId: string): Promise<FreeRoundTerms | null> };
  queue: Pick<OutcomeQueue, "take" | "giveBack">;
  blocks: Pick<BlockFactsCache, "of">;
  forced: Pick<ForcedOutcomes, "draw">;
  /** Draws the spin bucket for a spin that takes nothing from a queue (a forced one). */
  drawBucket: (bucket: BucketDraw) => Promise<Draw>;
  /** Where spins commit: the group commit, keyed spins with their key's record. */
  committer: SpinCommitter;
  /** Hints sent after a commit, never inside it: they only shorten other processes' waits. */
  hints: {
    eventsWritten(): void;
    generationNeeded(gameId: number): Promise<void>;
    counted(spin: WrittenSpin["spin"]): void;
  };
  logger: Logger;
  minReadyBlocks: number;
}

/**
 * An outcome that can never be recorded (already used by a committed spin, unreadable, or of a block
 * that was never sealed or is closed) only appears after a failure whose commit in fact went
 * through, or a queue rebuilt from stale data. Each is dropped and the next one taken, up to this
 * many per request.
 */
const MAX_UNUSABLE_SKIPPED = 20;

/** The request under its game's rules: what a plan is made of, besides the outcome. */
interface SpinContext {
  partner: PartnerAuth;
  game: GameRules;
  playerId: string;
  wagerMicros: number;
  freeRoundsId: string | null;
}

/** A spin's outcome: taken from the game's queue, or for a forced spin drawn from its sheet. */
type Sourced = { taken: TakenOutcome } | { forced: Outcome };
/** The spin's outcome on `client`; null when the spin bucket refused the request. */
type OutcomeSource = (game: GameRules, client: SqlClient) => Promise<Sourced | null>;

/**
 * The spin path, in order: validate the request against the game, take the next outcome (one
 * script call that also draws the spin bucket), plan the spin, commit it in the group commit (a
 * keyed spin with its key's record: `SpinCommitter`), then send the hints. Anything that fails after the take gives the outcome back to the front of the queue and
 * answers KS-5003, with nothing deducted; an outcome that can never be used is dropped and the next
 * one taken. Null means the spin bucket refused: nothing was taken or written.
 */
export class SpinService {
  constructor(private readonly deps: SpinServiceDeps) {}

  async spin(
    partner: PartnerAuth,
    request: SpinRequest,
    bucket: BucketDraw,
    idempotencyKey?: string,
  ): Promise<SpinReply | null> {
    const freeRound = await this.freeRoundOf(partner, request);
    const forceTier = request.forceTier ?? undefined;
    const source = forceTier === undefined ? this.queueSource(bucket) : this.forcedSource(partner, forceTier, bucket);
    const key = idempotencyKey === undefined ? undefined : keyedRequest(partner, request, idempotencyKey);
    // A keyed replay ignores the game (the first result stands even if the game changed since).
    const game = await this.lookUpGame(request.gameId);
    const rules = () => this.applyRules(partner, request, game, freeRound);
    if (!key) rules();
    for (let skipped = 0; ; skipped++) {
      try {
        return await this.attempt({ request, rules, source, key });
      } catch (error) {
        if (!(error instanceof UnusableOutcomeError)) throw error;
        if (skipped === MAX_UNUSABLE_SKIPPED) {
          throw new ServiceError(ErrorCode.SpinFailed, {
            message: "Spin processing failed (wager not deducted): no usable outcome",
          });
        }
      }
    }
  }

  /** One outcome's try: validate, source, plan, commit, after-commit; UnusableOutcomeError for the next outcome. */
  private async attempt(spin: {
    request: SpinRequest;
    /** The game's rules applied to the request (a keyed spin they refuse is answered from its record, if any). */
    rules: () => SpinContext;
    source: OutcomeSource;
    key: IdempotentRequest | undefined;
  }): Promise<SpinReply | null> {
    const { committer } = this.deps;
    let taken: TakenOutcome | undefined;
    let plan: SpinPlan | undefined;
    try {
      const committed = await committer.commit(async (client) => {
        const context = spin.rules();
        const sourced = await spin.source(context.game, client);
        if (sourced === null) return null;
        if ("taken" in sourced) taken = sourced.taken;
        plan = await this.plan(context, sourced, client);
        return plan;
      }, spin.key);
      if ("refused" in committed) return null;
      if ("replayed" in committed) {
        // Its first request committed while this one took an outcome: that outcome is unused.
        if (taken) await this.giveBack(taken, spin.request.gameId);
        return { body: committed.replayed, replayed: true };
      }
      return this.afterCommit(committed.written);
    } catch (error) {
      const written = plan && mayHaveCommitted(error) ? await this.recordedDespite(committer, error, plan) : null;
      if (written) return this.afterCommit(written);
      return this.recover(error, spin.request.gameId, taken);
    }
  }

  /** The game's next outcome from its queue; the spin bucket is drawn with the request's first take only. */
  private queueSource(bucket: BucketDraw): OutcomeSource {
    let firstTake: BucketDraw | undefined = bucket;
    return async (game) => {
      const taken = await this.deps.queue.take(game, firstTake);
      firstTake = undefined;
      if (taken === null) return null;
      // That was the list's last outcome: ask for generation now rather than at the next spin's KS-4203.
      if (taken.remaining === 0) void this.deps.hints.generationNeeded(game.id);
      return { taken };
    };
  }

  /** A forced sandbox spin: a tier of the game's sheet, checked before the spin bucket is drawn. */
  private forcedSource(partner: PartnerAuth, tier: string, bucket: BucketDraw): OutcomeSource {
    if (partner.environment !== "sandbox") {
      throw new ServiceError(ErrorCode.InvalidRequest, {
        message: "forceTier is accepted with sandbox keys only; production spins always take the next outcome",
        details: [{ path: "forceTier", message: "sandbox only" }],
      });
    }
    return async (game, client) => {
      const outcome = await this.deps.forced.draw(game, tier, client);
      const draw = await this.deps.drawBucket(bucket);
      return draw.allowed ? { forced: outcome } : null;
    };
  }

  private async lookUpGame(gameId: number): Promise<GameRules | null> {
    try {
      return await this.deps.games.get(gameId);
    } catch (error) {
      this.deps.logger.error({ err: error, gameId }, "spin failed: game look-up");
      throw new ServiceError(ErrorCode.SpinFailed, { cause: error });
    }
  }

  /**
   * The grant of a free-round spin, checked as far as its terms go: 404 KS-4219 when it is not the
   * partner's, 400 KS-4101 for a `wagerUsd` other than the grant's; a paid spin needs `wagerUsd`
   * (KS-4102) greater than 0 (KS-4103). Whether a round is left is the spin statement's to decide.
   */
  private async freeRoundOf(partner: PartnerAuth, request: SpinRequest): Promise<FreeRoundTerms | null> {
    const grantId = request.freeRoundsId ?? undefined;
    if (grantId === undefined) {
      if (request.wagerUsd === undefined) {
        throw new ServiceError(ErrorCode.RequiredFieldMissing, {
          details: [{ path: "wagerUsd", message: "Required (except with freeRoundsId)" }],
        });
      }
      assertPositiveWager(request.wagerUsd);
      return null;
    }
    const grant = await this.deps.freeRounds.get(grantId).catch((error: unknown) => {
      this.deps.logger.error({ err: error }, "spin failed: free-round grant look-up");
      throw new ServiceError(ErrorCode.SpinFailed, { cause: error });
    });
    if (!grant || grant.partnerId !== partner.partnerId || grant.environment !== partner.environment) {
      throw new ServiceError(ErrorCode.FreeRoundsNotFound, {
        details: [{ path: "freeRoundsId", message: "no such grant of this partner and environment" }],
      });
    }
    if (request.wagerUsd !== undefined && exactWager(request.wagerUsd) !== String(grant.wagerMicros)) {
      throw new ServiceError(ErrorCode.InvalidRequest, {
        message: "wagerUsd must be the grant's wager (or be left out) on a free-round spin",
        details: [{ path: "wagerUsd", message: `must equal the grant's wagerUsd, ${microsToUsd(grant.wagerMicros)}` }],
      });
    }
    return grant;
  }

  /** The game's rules applied to the request: KS-4006, KS-4202, KS-4103; KS-4218 for a grant of another game. */
  private applyRules(
    partner: PartnerAuth,
    request: SpinRequest,
    game: GameRules | null,
    freeRound: FreeRoundTerms | null,
  ): SpinContext {
    if (!game || game.partnerId !== partner.partnerId || game.environment !== partner.environment) {
      throw new ServiceError(ErrorCode.GameNotOwned);
    }
    if (!game.isActive) throw new ServiceError(ErrorCode.GameInactive);
    if (freeRound && freeRound.gameId !== game.id) throw freeRoundUnavailable("another_game", freeRound.gameId);
    // A grant's wager was within the game's bounds when it was made; it stays the round's wager.
    const wagerMicros = freeRound ? freeRound.wagerMicros : wagerMicrosWithin(request.wagerUsd!, game);
    return { partner, game, playerId: request.playerId, wagerMicros, freeRoundsId: freeRound?.id ?? null };
  }

  private async plan(context: SpinContext, sourced: Sourced, client: SqlClient): Promise<SpinPlan> {
    const { minReadyBlocks } = this.deps;
    if ("forced" in sourced) return planSpin({ ...context, outcome: sourced.forced, block: null, minReadyBlocks });
    const { item, raw } = sourced.taken;
    const block = await this.deps.blocks.of(item.blockId, client);
    if (block === null) throw new UnusableOutcomeError(`outcome of unknown block ${item.blockId}`);
    let outcome: Outcome;
    try {
      outcome = queueItemOutcome(item, block.codec);
    } catch (error) {
      throw new UnusableOutcomeError(`unreadable queue item: ${raw.slice(0, 200)}`, { cause: error });
    }
    const position: OutcomePosition = { blockId: item.blockId, index: item.index };
    return planSpin({ ...context, outcome, block: { position, size: block.size }, minReadyBlocks });
  }

  /**
   * A failure with no answer to the write or its COMMIT (the connection went away after sending)
   * may hide a committed spin: before answering KS-5003 ("not deducted"), look the spin up by its
   * id and answer its result if it stands. When even the look-up fails, the spin's fate is unknown,
   * and the KS-5003 says so.
   */
  private async recordedDespite(committer: SpinCommitter, error: unknown, plan: SpinPlan): Promise<WrittenSpin | null> {
    try {
      const written = await committer.recorded(plan);
      if (written) this.deps.logger.warn({ err: error, spinId: plan.spin.id }, "spin committed despite a lost reply");
      return written;
    } catch (lookupError) {
      this.deps.logger.error({ err: lookupError, spinId: plan.spin.id }, "spin outcome unknown after a lost reply");
      throw new ServiceError(ErrorCode.SpinFailed, {
        message:
          "Spin processing failed: the database did not confirm whether the spin was recorded. Retry with the " +
          "same Idempotency-Key, or read the player's spins, before spinning again",
        cause: error,
      });
    }
  }

  private afterCommit(written: WrittenSpin): SpinReply {
    const { spin, largeWin, generationNeeded } = written;
    if (largeWin) this.deps.hints.eventsWritten();
    if (generationNeeded) void this.deps.hints.generationNeeded(spin.gameId);
    this.deps.hints.counted(spin);
    return { body: written.body, replayed: false };
  }

  private async giveBack(taken: TakenOutcome, gameId: number): Promise<void> {
    await this.deps.queue.giveBack(taken).catch((pushError: unknown) => {
      // The outcome stays unserved in its sealed block in Postgres, from where queues are rebuilt.
      this.deps.logger.error({ err: pushError, gameId, blockId: taken.item.blockId }, "outcome give-back failed");
    });
  }

  /**
   * After a rollback: an unusable outcome is dropped (UnusableOutcomeError: the caller takes the
   * next one), any other is given back; then the failure is named.
   */
  private async recover(error: unknown, gameId: number, taken: TakenOutcome | undefined): Promise<never> {
    if (error instanceof UnusableOutcomeError || (taken && isDuplicateOutcome(error))) {
      const where = taken ? { blockId: taken.item.blockId, index: taken.item.index } : {};
      this.deps.logger.error({ err: error, gameId, ...where }, "dropped an outcome that cannot be used");
      throw error instanceof UnusableOutcomeError
        ? error
        : new UnusableOutcomeError("outcome already used", { cause: error });
    }
    if (taken) await this.giveBack(taken, gameId);
    if (error instanceof ServiceError) {
      if (error.code === ErrorCode.OutcomeQueueEmpty) await this.deps.hints.generationNeeded(gameId);
      throw error;
    }
    const figure = exceededPlayerBound(error);
    if (figure !== null) throw playerBoundError(figure);
    this.deps.logger.error({ err: error, gameId }, "spin failed");
    throw new ServiceError(ErrorCode.SpinFailed, { cause: error });
  }
}

/** The request as understood (the wager as an exact decimal), so `1` and `1.0` are one request. */
function keyedRequest(partner: PartnerAuth, request: SpinRequest, key: string): IdempotentRequest {
  const forceTier = request.forceTier ?? undefined;
  return idempotentRequest(
    { partnerId: partner.partnerId, environment: partner.environment, key },
    {
      route: "POST /spins",
      gameId: request.gameId,
      playerId: request.playerId,
      // A paid spin's fields are hashed as release 1 hashed them, so its keys replay on either release.
      ...(request.wagerUsd === undefined ? {} : { wager: exactWager(request.wagerUsd) }),
      ...(forceTier === undefined ? {} : { forceTier }),
      ...(request.freeRoundsId ? { freeRoundsId: request.freeRoundsId } : {}),
    },
  );
}

/**
 * The player's figures are kept exact as JSON numbers (CONTRACT §9): the database refused a spin that
 * would take one past its bound, and nothing was written.
 */
function playerBoundError(figure: BoundedPlayerFigure): ServiceError {
  const bound = figure === "totalSpins" ? "2147483647 spins" : `${formatScaledDecimal(Number.MAX_SAFE_INTEGER)} USD`;
  return new ServiceError(ErrorCode.WagerOutOfRange, {
    message: `Spin refused: it would take the player's ${figure} past ${bound}, the most it can show exactly; nothing was written`,
    details: [{ path: "wagerUsd", message: `would take the player's ${figure} past ${bound}` }],
  });
}
