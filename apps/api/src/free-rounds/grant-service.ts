import { ErrorCode, ServiceError } from "@outcomes/core";
import type { FreeRoundGrantOwner, FreeRoundGrantWithStatus, NewFreeRoundGrant, Transaction } from "@outcomes/db";
import { FreeRoundGrantSchema, type FreeRoundGrantView, presentFreeRoundGrant } from "@outcomes/records";
import { type Created, type KeyedCreates, keyedRequest } from "../idempotency.js";
import type { GameRules } from "../spins/game-cache.js";
import { playableGame } from "../spins/spin-order.js";
import { exactWager, wagerMicrosWithin } from "../spins/wager.js";

// Free-round grants (CONTRACT §14, docs/free-rounds.md): the rules of a grant; its SQL is
// packages/db's (free-round-grants.ts), its HTTP the route's (routes/partner/free-rounds.ts).

export const MAX_DAYS_AHEAD = 90;
const DAY_MS = 86_400_000;
/** An `expiresAt` of exactly 90 days ahead, computed on a client whose clock runs a little ahead, still counts. */
const CLOCK_SKEW_MS = 60_000;

/** A grant as the route parsed it (ids, counts and formats checked by its schema). */
export interface GrantRequest {
  gameId: number;
  playerIds: string[];
  rounds: number;
  wagerUsd: number;
  /** ISO 8601 with a time zone. */
  expiresAt: string;
}

export interface GrantServiceDeps {
  games: { get(gameId: number): Promise<GameRules | null> };
  creates: Pick<KeyedCreates, "createOnce">;
  createGrant(tx: Transaction, owner: FreeRoundGrantOwner, grant: NewFreeRoundGrant): Promise<FreeRoundGrantWithStatus>;
  now(): number;
}

/**
 * A grant: the partner's own active game (403 KS-4006, 400 KS-4202), a wager within its bounds (400
 * KS-4103), an expiry in the future and at most 90 days ahead (400 KS-4101); then the grant and its
 * players, once per `Idempotency-Key` (the keyed-create concern: a repeat answers the first grant
 * before any of these rules, which may have changed since).
 */
export class GrantService {
  constructor(private readonly deps: GrantServiceDeps) {}

  grant(
    owner: FreeRoundGrantOwner,
    request: GrantRequest,
    idempotencyKey?: string,
  ): Promise<Created<FreeRoundGrantWithStatus, FreeRoundGrantView>> {
    return this.deps.creates.createOnce({
      key: keyedRequest(owner, idempotencyKey, canonicalGrant(request)),
      admit: async () => {
        const expiresAt = this.expiryWithin(request.expiresAt);
        const game = playableGame(owner, await this.deps.games.get(request.gameId));
        const grant: NewFreeRoundGrant = {
          gameId: game.id,
          wagerMicros: wagerMicrosWithin(request.wagerUsd, game),
          rounds: request.rounds,
          expiresAt,
          playerIds: request.playerIds,
        };
        return (tx) => this.deps.createGrant(tx, owner, grant);
      },
      present: presentFreeRoundGrant,
      replay: (stored) => FreeRoundGrantSchema.parse(stored),
    });
  }

  /** `expiresAt` in the future and at most 90 days ahead (KS-4101). */
  private expiryWithin(text: string): Date {
    const at = Date.parse(text);
    const now = this.deps.now();
    const problem =
      at <= now
        ? "must be in the future"
        : at > now + MAX_DAYS_AHEAD * DAY_MS + CLOCK_SKEW_MS
          ? `must be at most ${MAX_DAYS_AHEAD} days ahead`
          : null;
    if (problem)
      throw new ServiceError(ErrorCode.InvalidRequest, { details: [{ path: "expiresAt", message: problem }] });
    return new Date(at);
  }
}

/** The grant as understood (the wager as an exact decimal, the expiry as an instant), as release 2 hashed it. */
function canonicalGrant(request: GrantRequest): Record<string, string | number> {
  return {
    route: "POST /free-rounds",
    gameId: request.gameId,
    playerIds: JSON.stringify(request.playerIds),
    rounds: request.rounds,
    wager: exactWager(request.wagerUsd),
    expiresAt: new Date(request.expiresAt).toISOString(),
  };
}
