import {
  formatScaledDecimal,
  type Outcome,
  type OutcomePosition,
  queueItemOutcome,
  ServiceError,
} from "@outcomes/core";
import {
  type BoundedPlayerFigure,
  type Database,
  exceededPlayerBound,
  isDuplicateOutcome,
  mayHaveCommitted,
  type SqlClient,
  type SqlPool,
  saveIdempotencyRecord,
  sqlClientOf,
} from "@outcomes/db";
import { enqueueGeneration, notifyEvents, type Producers, type RedisClient, type RedisKeys } from "@outcomes/queue";
import { replayedBody, type SpinResultBody } from "@outcomes/records";
import { countSpin, type Env, type Logger } from "@outcomes/runtime";
import type { PartnerAuth } from "../auth/key-verifier.js";
import type { SpinGate } from "../middleware/gcra.js";
import { drawSpinGate } from "../middleware/rate-limit.js";
import { BlockFactsCache } from "./block-facts.js";
import { ForcedOutcomes } from "./forced-outcomes.js";
import type { GameCache, GameRules } from "./game-cache.js";
import { type IdempotentRequest, idempotentRequest, priorResponse } from "./idempotency.js";
import { OutcomeQueue, type TakenOutcome, UnusableOutcomeError } from "./outcome-queue.js";
import { SpinBatcher } from "./spin-batcher.js";
import { committedWrite, planSpin, type SpinPlan, type WrittenSpin, writeSpin } from "./spin-writer.js";
import { assertPositiveWager, exactWager, wagerMicrosWithin } from "./wager.js";

/**
 * The player's figures are kept exact as JSON numbers (CONTRACT §9): the database refused a spin that
 * would take one past its bound, and nothing was written.
 */
function playerBoundError(figure: BoundedPlayerFigure): ServiceError {
  const bound = figure === "totalSpins" ? "2147483647 spins" : `${formatScaledDecimal(Number.MAX_SAFE_INTEGER)} USD`;
  return new ServiceError("KS-4103", {
    message: `Spin refused: it would take the player's ${figure} past ${bound}, the most it can show exactly; nothing was written`,
    details: [{ path: "wagerUsd", message: `would take the player's ${figure} past ${bound}` }],
  });
}

/** What the spin path runs on: the API process's own clients and game cache (see buildApi). */
export interface SpinServiceDeps {
  env: Env;
  db: Database;
  redis: RedisClient;
  keys: RedisKeys;
  producers: Producers;
  logger: Logger;
  games: GameCache;
}

export interface SpinRequest {
  gameId: number;
  playerId: string;
  wagerUsd: number;
  /** Sandbox only: a tier of the game's PAR sheet, shown by a random combination of it (CONTRACT §11). */
  forceTier?: string | null;
}

export interface SpinReply {
  body: SpinResultBody;
  /** True when an `Idempotency-Key` replay returned the first request's result. */
  replayed: boolean;
}

/** What one spin is about, once validated. */
interface SpinContext {
  partner: PartnerAuth;
  game: GameRules;
  playerId: string;
  wagerMicros: number;
}

/**
 * An outcome that can never be recorded (already used by a committed spin, unreadable, or of a block
 * that was never sealed) only appears after a failure whose commit in fact went through, or a queue
 * rebuilt from stale data. Each is dropped and the next one taken, up to this many per request.
 */
const MAX_UNUSABLE_SKIPPED = 20;
const UNUSABLE = Symbol("unusable outcome");

/**
 * A spin's outcome: the game's next one from its queue (the request's first take also draws the
 * spin bucket), or for a forced spin one drawn from the game's sheet (no block, nothing taken).
 */
type SourcedOutcome =
  | { outcome: Outcome; taken?: undefined }
  /** Taken from the queue: read when planned (a compact item needs its block's codec), given back when the spin fails. */
  | { taken: TakenOutcome };
type OutcomeSource = (game: GameRules, client: SqlClient) => Promise<SourcedOutcome>;

/** A keyed spin's transaction either replays the first response or writes a new spin. */
type KeyedOutcome = { replayed: SpinResultBody } | { written: WrittenSpin };

/**
 * The spin path: validate against the game, take the next outcome (one LPOP), then commit the
 * player's balance and the spin, atomically: plain spins in a group commit with the others arriving
 * within a few ms (see `SpinBatcher`), keyed spins in a transaction of their own (the key's lock and
 * look-up come first). Anything that fails after the pop gives the outcome back to the front of
 * the queue and answers KS-5003, with nothing deducted.
 */
export class SpinService {
  private readonly games: GameCache;
  private readonly queue: OutcomeQueue;
  private readonly blocks: BlockFactsCache;
  private readonly forcedOutcomes = new ForcedOutcomes();
  /** The spin path's own statements are prepared on postgres.js directly (see `SqlClient`). */
  private readonly sql: SqlPool;
  private readonly batcher: SpinBatcher;

  constructor(private readonly deps: SpinServiceDeps) {
    this.sql = sqlClientOf(deps.db);
    this.batcher = new SpinBatcher(this.sql, {
      maxSize: deps.env.SPIN_BATCH_MAX_SIZE,
      maxWaitMs: deps.env.SPIN_BATCH_MAX_WAIT_MS,
    });
    this.games = deps.games;
    this.queue = new OutcomeQueue(deps.redis, deps.keys);
    this.blocks = new BlockFactsCache();
  }

  async spin(partner: PartnerAuth, request: SpinRequest, gate: SpinGate, idempotencyKey?: string): Promise<SpinReply> {
    assertPositiveWager(request.wagerUsd);
    const forceTier = request.forceTier ?? undefined;
    const source = forceTier === undefined ? this.queueSource(gate) : this.forcedSource(partner, forceTier, gate);
    if (idempotencyKey === undefined) {
      const context = await this.validated(partner, request);
      return this.skippingUnusable(() => this.spinWithoutKey(context, source));
    }
    // The request as understood (the wager as an exact decimal), so `1` and `1.0` are one request.
    const idempotent = idempotentRequest(
      { partnerId: partner.partnerId, environment: partner.environment, key: idempotencyKey },
      {
        route: "POST /spins",
        gameId: request.gameId,
        playerId: request.playerId,
        wager: exactWager(request.wagerUsd),
        ...(forceTier === undefined ? {} : { forceTier }),
      },
    );
    return this.skippingUnusable(() => this.spinWithKey(partner, request, idempotent, source));
  }

  /** The game's next outcome from its queue; the spin bucket is drawn with the first take only (see OutcomeQueue.take). */
  private queueSource(gate: SpinGate): OutcomeSource {
    let firstTake: SpinGate | undefined = gate;
    return async (game) => {
      const taken = await this.queue.take(game, firstTake);
      firstTake = undefined;
      // That was the list's last outcome: ask for generation now rather than at the next spin's KS-4203.
      if (taken.remaining === 0) void this.requestGeneration(game.id);
      return { taken };
    };
  }

  /** A forced sandbox spin: a tier of the game's sheet, checked before the spin bucket is drawn. */
  private forcedSource(partner: PartnerAuth, tier: string, gate: SpinGate): OutcomeSource {
    if (partner.environment !== "sandbox") {
      throw new ServiceError("KS-4101", {
        message: "forceTier is accepted with sandbox keys only; production spins always take the next outcome",
        details: [{ path: "forceTier", message: "sandbox only" }],
      });
    }
    return async (game, client) => {
      const outcome = await this.forcedOutcomes.draw(game, tier, client);
      await drawSpinGate(this.deps.redis, gate);
      return { outcome };
    };
  }

  private async skippingUnusable(attempt: () => Promise<SpinReply | typeof UNUSABLE>): Promise<SpinReply> {
    for (let skipped = 0; skipped <= MAX_UNUSABLE_SKIPPED; skipped++) {
      const reply = await attempt();
      if (reply !== UNUSABLE) return reply;
    }
    throw new ServiceError("KS-5003", { message: "Spin processing failed (wager not deducted): no usable outcome" });
  }

  /** The game's rules applied to the request: KS-4006, KS-4202, KS-4103. */
  private async validated(partner: PartnerAuth, request: SpinRequest): Promise<SpinContext> {
    return this.applyRules(partner, request, await this.lookUpGame(request.gameId));
  }

  private async lookUpGame(gameId: number): Promise<GameRules | null> {
    try {
      return await this.games.get(gameId);
    } catch (error) {
      this.deps.logger.error({ err: error, gameId }, "spin failed: game look-up");
      throw new ServiceError("KS-5003", { cause: error });
    }
  }

  private applyRules(partner: PartnerAuth, request: SpinRequest, game: GameRules | null): SpinContext {
    if (!game || game.partnerId !== partner.partnerId || game.environment !== partner.environment) {
      throw new ServiceError("KS-4006");
    }
    if (!game.isActive) throw new ServiceError("KS-4202");
    return { partner, game, playerId: request.playerId, wagerMicros: wagerMicrosWithin(request.wagerUsd, game) };
  }

  /**
   * The hot path: one LPOP, then the spin joins the next group commit (usually one autocommit
   * statement for the whole batch); the answer waits for that commit.
   */
  private async spinWithoutKey(context: SpinContext, source: OutcomeSource): Promise<SpinReply | typeof UNUSABLE> {
    let sourced: SourcedOutcome | undefined;
    let plan: SpinPlan | undefined;
    try {
      sourced = await source(context.game, this.sql);
      plan = await this.plan(context, sourced, this.sql);
      return this.committed(await this.batcher.submit(plan));
    } catch (error) {
      const written = await this.committedDespite(error, plan);
      if (written) return this.committed(written);
      return this.recover(error, context.game.id, sourced?.taken);
    }
  }

  /**
   * With `Idempotency-Key`: the key's lock and look-up come first, in the transaction that then
   * takes the outcome and commits the spin with its record, so a duplicate waits and replays. A
   * replay returns the first result even if the game has changed since (made inactive, re-priced):
   * the rules are applied only after the look-up found no first response.
   *
   * Every statement of the transaction runs on its own connection: the game is read before it
   * begins, and a block size it misses is read on the transaction. A transaction that waited for a
   * second connection of the pool would deadlock the process once every connection held one.
   */
  private async spinWithKey(
    partner: PartnerAuth,
    request: SpinRequest,
    idempotent: IdempotentRequest,
    source: OutcomeSource,
  ): Promise<SpinReply | typeof UNUSABLE> {
    const game = await this.lookUpGame(request.gameId);
    let sourced: SourcedOutcome | undefined;
    let plan: SpinPlan | undefined;
    try {
      const result = await this.sql.begin(async (tx): Promise<KeyedOutcome> => {
        const prior = await priorResponse(tx, idempotent);
        if (prior !== null) return { replayed: replayedBody(prior) };
        const context = this.applyRules(partner, request, game);
        sourced = await source(context.game, tx);
        plan = await this.plan(context, sourced, tx);
        const written = await writeSpin(tx, plan);
        await saveIdempotencyRecord(tx, idempotent.scope, {
          requestHash: idempotent.hash,
          responseStatus: 200,
          responseBody: written.body,
        });
        return { written };
      });
      if ("replayed" in result) return { body: result.replayed, replayed: true };
      return this.committed(result.written);
    } catch (error) {
      // The spin and its key's record commit together, so a spin found here is also what a retry replays.
      const written = await this.committedDespite(error, plan);
      if (written) return this.committed(written);
      return this.recover(error, request.gameId, sourced?.taken);
    }
  }

  private committed(written: WrittenSpin): SpinReply {
    this.afterCommit(written);
    return { body: written.body, replayed: false };
  }

  /**
   * A failure with no answer to the write or its COMMIT (the connection went away after sending)
   * may hide a committed spin: before answering KS-5003 ("not deducted"), look the spin up by its
   * id and answer its result if it stands. When even the look-up fails, the spin's
   * fate is unknown, and the KS-5003 says so.
   */
  private async committedDespite(error: unknown, plan: SpinPlan | undefined): Promise<WrittenSpin | null> {
    if (!plan || !mayHaveCommitted(error)) return null;
    try {
      const written = await committedWrite(this.sql, plan);
      if (written) this.deps.logger.warn({ err: error, spinId: plan.spin.id }, "spin committed despite a lost reply");
      return written;
    } catch (lookupError) {
      this.deps.logger.error({ err: lookupError, spinId: plan.spin.id }, "spin outcome unknown after a lost reply");
      throw new ServiceError("KS-5003", {
        message:
          "Spin processing failed: the database did not confirm whether the spin was recorded. Retry with the " +
          "same Idempotency-Key, or read the player's spins, before spinning again",
        cause: error,
      });
    }
  }

  private async plan(context: SpinContext, sourced: SourcedOutcome, client: SqlClient): Promise<SpinPlan> {
    const minReadyBlocks = this.deps.env.MIN_READY_BLOCKS;
    if (!sourced.taken) return planSpin({ ...context, outcome: sourced.outcome, block: null, minReadyBlocks });
    const { item } = sourced.taken;
    const block = await this.blocks.of(item.blockId, client);
    if (block === null) throw new UnusableOutcomeError(`outcome of unknown block ${item.blockId}`);
    let outcome: Outcome;
    try {
      outcome = queueItemOutcome(item, block.codec);
    } catch (error) {
      throw new UnusableOutcomeError(`unreadable queue item: ${sourced.taken.raw.slice(0, 200)}`, { cause: error });
    }
    const position: OutcomePosition = { blockId: item.blockId, index: item.index };
    return planSpin({ ...context, outcome, block: { position, size: block.size }, minReadyBlocks });
  }

  /** Hints that only shorten other processes' waits: sent after the commit, never inside it. */
  private afterCommit({ spin, largeWin, generationNeeded }: WrittenSpin): void {
    if (largeWin) void notifyEvents(this.deps.producers);
    if (generationNeeded) void this.requestGeneration(spin.gameId);
    countSpin({
      gameId: spin.gameId,
      tier: spin.outcome.tier,
      wagerMicros: spin.wagerMicros,
      payoutMicros: spin.payoutMicros,
    });
  }

  /** After a rollback: drop an unusable outcome, give any other one back, and name the failure. */
  private async recover(error: unknown, gameId: number, taken: TakenOutcome | undefined): Promise<typeof UNUSABLE> {
    if (error instanceof UnusableOutcomeError || (taken && isDuplicateOutcome(error))) {
      const where = taken ? { blockId: taken.item.blockId, index: taken.item.index } : {};
      this.deps.logger.error({ err: error, gameId, ...where }, "dropped an outcome that cannot be used");
      return UNUSABLE;
    }
    if (taken) {
      const { blockId } = taken.item;
      await this.queue.giveBack(taken).catch((pushError: unknown) => {
        // The outcome stays unserved in its sealed block in Postgres, from where queues are rebuilt.
        this.deps.logger.error({ err: pushError, gameId, blockId }, "outcome give-back failed");
      });
    }
    if (error instanceof ServiceError) {
      if (error.code === "KS-4203") await this.requestGeneration(gameId);
      throw error;
    }
    const figure = exceededPlayerBound(error);
    if (figure !== null) throw playerBoundError(figure);
    this.deps.logger.error({ err: error, gameId }, "spin failed");
    throw new ServiceError("KS-5003", { cause: error });
  }

  /** One pending generation job per game, however many spins ask for it at once (see enqueueGeneration). */
  private async requestGeneration(gameId: number): Promise<void> {
    await enqueueGeneration(this.deps.producers, gameId).catch((error: unknown) =>
      this.deps.logger.error({ err: error, gameId }, "could not request block generation"),
    );
  }
}
