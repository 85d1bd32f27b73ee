import { newId, payoutMicros, presentationOf, ServiceError, usdToMicros } from "@outcomes/core";
import { insertEvent, isDuplicateOutcome, recordSpin, saveIdempotencyRecord, type Transaction } from "@outcomes/db";
import { notifyEvents } from "@outcomes/queue";
import { countSpin } from "@outcomes/runtime";
import type { AppDeps, PartnerAuth } from "../context.js";
import { GameCache, type GameRules } from "./game-cache.js";
import { IdempotencyPurger, type IdempotentRequest, idempotentRequest, priorResponse } from "./idempotency.js";
import { OutcomeQueue, type TakenOutcome } from "./outcome-queue.js";
import { replayedBody, type SpinResultBody, spinResultBody } from "./spin-result.js";
import { assertPositiveWager, wagerMicrosWithin } from "./wager.js";

export interface SpinRequest {
  gameId: number;
  playerId: string;
  wagerUsd: number;
}

export interface SpinReply {
  body: SpinResultBody;
  /** True when an `Idempotency-Key` replay returned the first request's result. */
  replayed: boolean;
}

/**
 * A duplicate outcome (already used by a committed spin) only appears after a failure whose commit
 * in fact went through, or a queue rebuilt from stale data; each is dropped and the next one taken,
 * up to this many per request.
 */
const MAX_DUPLICATES_SKIPPED = 20;

/** Marks "this attempt drew an outcome that was already used": take the next one. */
const DUPLICATE = Symbol("duplicate outcome");

/**
 * The spin path: validate against the game, take the next outcome (one LPOP), then commit player,
 * spin, idempotency record and large-win event in one transaction. Anything that fails after the
 * pop gives the outcome back to the front of the queue and answers KS-5003, with nothing deducted.
 */
export class SpinService {
  private readonly games: GameCache;
  private readonly queue: OutcomeQueue;
  private readonly purger: IdempotencyPurger;

  constructor(private readonly deps: AppDeps) {
    const defaultThreshold = usdToMicros(deps.env.LARGE_WIN_THRESHOLD_USD);
    if (defaultThreshold === null) throw new Error("LARGE_WIN_THRESHOLD_USD must have at most 6 decimals");
    this.games = new GameCache(deps.db, defaultThreshold);
    this.queue = new OutcomeQueue(deps.redis, deps.keys);
    this.purger = new IdempotencyPurger(deps.db, (error) =>
      deps.logger.warn({ err: error }, "idempotency purge failed"),
    );
  }

  async spin(partner: PartnerAuth, request: SpinRequest, idempotencyKey?: string): Promise<SpinReply> {
    assertPositiveWager(request.wagerUsd);
    const game = await this.gameOf(partner, request.gameId);
    const wagerMicros = wagerMicrosWithin(request.wagerUsd, game);
    let idempotent: IdempotentRequest | undefined;
    if (idempotencyKey !== undefined) {
      idempotent = idempotentRequest(
        { partnerId: partner.partnerId, environment: partner.environment, key: idempotencyKey },
        { route: "POST /spins", gameId: game.id, playerId: request.playerId, wagerMicros },
      );
      this.purger.maybeRun();
    }
    for (let skipped = 0; skipped <= MAX_DUPLICATES_SKIPPED; skipped++) {
      const reply = await this.attempt(partner, game, request.playerId, wagerMicros, idempotent);
      if (reply !== DUPLICATE) return reply;
    }
    throw new ServiceError("KS-5003", { message: "Spin processing failed (wager not deducted): no usable outcome" });
  }

  private async gameOf(partner: PartnerAuth, gameId: number): Promise<GameRules> {
    let game: GameRules | null;
    try {
      game = await this.games.get(gameId);
    } catch (error) {
      this.deps.logger.error({ err: error, gameId }, "spin failed: game look-up");
      throw new ServiceError("KS-5003", { cause: error });
    }
    if (!game || game.partnerId !== partner.partnerId || game.environment !== partner.environment) {
      throw new ServiceError("KS-4006");
    }
    if (!game.isActive) throw new ServiceError("KS-4202");
    return game;
  }

  private async attempt(
    partner: PartnerAuth,
    game: GameRules,
    playerId: string,
    wagerMicros: number,
    idempotent: IdempotentRequest | undefined,
  ): Promise<SpinReply | typeof DUPLICATE> {
    let taken: TakenOutcome | undefined;
    let largeWin = false;
    try {
      const reply = await this.deps.db.transaction(async (tx): Promise<SpinReply> => {
        if (idempotent) {
          const prior = await priorResponse(tx, idempotent);
          if (prior !== null) return { body: replayedBody(prior), replayed: true };
        }
        // Taken inside the transaction, once a connection is held: an outcome is out of the queue
        // only for the few milliseconds its commit takes, and in the order spins got a connection.
        taken = await this.queue.take(game.id);
        const committed = await this.commit(tx, partner, game, playerId, wagerMicros, taken);
        const body = committed.body;
        largeWin = committed.largeWin;
        if (idempotent) {
          await saveIdempotencyRecord(tx, idempotent.scope, {
            requestHash: idempotent.hash,
            responseStatus: 200,
            responseBody: body,
          });
        }
        return { body, replayed: false };
      });
      // After the commit, never inside it: only a hint that shortens the webhook worker's wait.
      if (largeWin) void notifyEvents(this.deps.producers);
      if (!reply.replayed)
        countSpin({
          gameId: game.id,
          tier: reply.body.outcome.prizeTier,
          wagerMicros,
          payoutMicros: usdToMicros(reply.body.outcome.payoutUsd) ?? 0,
        });
      return reply;
    } catch (error) {
      return this.recover(error, game, taken);
    }
  }

  private async commit(
    tx: Transaction,
    partner: PartnerAuth,
    game: GameRules,
    playerId: string,
    wagerMicros: number,
    { outcome }: TakenOutcome,
  ): Promise<{ body: SpinResultBody; largeWin: boolean }> {
    const spinId = newId("spn");
    const payout = payoutMicros(wagerMicros, outcome.multiplierMillionths);
    const presentation = presentationOf(outcome);
    const recorded = await recordSpin(tx, {
      id: spinId,
      partnerId: partner.partnerId,
      environment: partner.environment,
      gameId: game.id,
      externalPlayerId: playerId,
      outcome,
      wagerMicros,
      payoutMicros: payout,
      presentation,
    });
    const body = spinResultBody({
      id: spinId,
      gameId: game.id,
      externalPlayerId: playerId,
      wagerMicros,
      prizeTier: outcome.tier,
      multiplierMillionths: outcome.multiplierMillionths,
      payoutMicros: payout,
      balanceAfterMicros: recorded.balanceAfterMicros,
      presentation,
      createdAt: recorded.createdAt,
    });
    const largeWin = payout > 0 && payout >= game.largeWinThresholdMicros;
    if (largeWin) await this.recordLargeWin(tx, partner, body);
    return { body, largeWin };
  }

  /** The `spin.large_win` event, in the outbox, committed (or not) with the spin itself. */
  private async recordLargeWin(tx: Transaction, partner: PartnerAuth, spin: SpinResultBody): Promise<void> {
    await insertEvent(tx, {
      partnerId: partner.partnerId,
      environment: partner.environment,
      type: "spin.large_win",
      now: new Date(spin.createdAt),
      data: {
        spinId: spin.spinId,
        gameId: spin.gameId,
        playerId: spin.playerId,
        wagerUsd: spin.wagerUsd,
        payoutUsd: spin.outcome.payoutUsd,
        prizeTier: spin.outcome.prizeTier,
        multiplier: spin.outcome.multiplier,
      },
    });
  }

  /** After a rollback: drop a duplicate outcome, give any other one back, and name the failure. */
  private async recover(error: unknown, game: GameRules, taken: TakenOutcome | undefined): Promise<typeof DUPLICATE> {
    if (taken && isDuplicateOutcome(error)) {
      this.deps.logger.warn(
        { gameId: game.id, blockId: taken.outcome.blockId, index: taken.outcome.index },
        "dropped an outcome already used",
      );
      return DUPLICATE;
    }
    if (taken) {
      await this.queue.giveBack(game.id, taken).catch((pushError: unknown) => {
        // The outcome stays unserved in its sealed block in Postgres, from where queues are rebuilt.
        this.deps.logger.error(
          { err: pushError, gameId: game.id, blockId: taken.outcome.blockId },
          "outcome give-back failed",
        );
      });
    }
    if (error instanceof ServiceError) {
      if (error.code === "KS-4203") await this.requestGeneration(game.id);
      throw error;
    }
    this.deps.logger.error({ err: error, gameId: game.id }, "spin failed");
    throw new ServiceError("KS-5003", { cause: error });
  }

  /** One pending generation job per game, however many spins find the queue empty at once. */
  private async requestGeneration(gameId: number): Promise<void> {
    await this.deps.producers
      .add("blocks.generate", { gameId }, { deduplication: { id: `blocks.generate:${gameId}` } })
      .catch((error: unknown) => this.deps.logger.error({ err: error, gameId }, "could not request block generation"));
  }
}
