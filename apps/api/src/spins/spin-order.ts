import { ErrorCode, microsToUsd, type Owner, requireOwned, ServiceError } from "@outcomes/core";
import type { FreeRoundRefusal } from "@outcomes/db";
import type { PartnerAuth } from "../auth/key-verifier.js";
import type { FreeRoundTerms } from "./free-round-cache.js";
import type { GameRules } from "./game-cache.js";
import { assertPositiveWager, exactWager, wagerMicrosWithin } from "./wager.js";

export interface SpinRequest {
  gameId: number;
  playerId: string;
  /** Required, except on a free-round spin, whose wager is its grant's (if given, it must equal it). */
  wagerUsd?: number | undefined;
  /** A free-round grant of the player's (CONTRACT §14): the spin uses one of its rounds. */
  freeRoundsId?: string | null | undefined;
  /** Sandbox only: a tier of the game's PAR sheet, shown by a random combination of it (CONTRACT §11). */
  forceTier?: string | null | undefined;
}

/** A request admitted under its game's rules: everything the spin needs besides its outcome. */
export interface SpinOrder {
  partner: PartnerAuth;
  game: GameRules;
  playerId: string;
  wagerMicros: number;
  /** The grant whose round the spin uses; null for a paid spin. */
  freeRoundsId: string | null;
  /** A forced sandbox spin's tier; null for a spin that takes the game's next outcome. */
  forceTier: string | null;
  /**
   * The player's protection is judged when the spin commits (CONTRACT §16): the partner's spins are
   * checked (`PartnerAuth.checked`) and the `jurisdictions` gate is open. False: the plain path.
   */
  checked: boolean;
}

const grantNotFound = () =>
  new ServiceError(ErrorCode.FreeRoundsNotFound, {
    details: [{ path: "freeRoundsId", message: "no such grant of this partner and environment" }],
  });
const gameNotOwned = () => new ServiceError(ErrorCode.GameNotOwned);

/** The partner's own game (else 403 KS-4006), active (else 400 KS-4202): what a spin and a grant play. */
export function playableGame(owner: Owner, game: GameRules | null): GameRules {
  const own = requireOwned(owner, game, gameNotOwned);
  if (!own.isActive) throw new ServiceError(ErrorCode.GameInactive);
  return own;
}

/**
 * What the request says on its own, before any rule of its game: a paid spin needs `wagerUsd`
 * (KS-4102) greater than 0 (KS-4103); a free-round spin's grant must be the partner's (404 KS-4219)
 * and its `wagerUsd`, if given, the grant's (KS-4101); `forceTier` takes a sandbox key (KS-4101).
 */
export function checkRequest(partner: PartnerAuth, request: SpinRequest, grant: FreeRoundTerms | null): void {
  if (request.forceTier != null && partner.environment !== "sandbox") {
    throw new ServiceError(ErrorCode.InvalidRequest, {
      message: "forceTier is accepted with sandbox keys only; production spins always take the next outcome",
      details: [{ path: "forceTier", message: "sandbox only" }],
    });
  }
  if (request.freeRoundsId == null) {
    if (request.wagerUsd === undefined) {
      throw new ServiceError(ErrorCode.RequiredFieldMissing, {
        details: [{ path: "wagerUsd", message: "Required (except with freeRoundsId)" }],
      });
    }
    assertPositiveWager(request.wagerUsd);
    return;
  }
  const { wagerMicros } = requireOwned(partner, grant, grantNotFound);
  if (request.wagerUsd !== undefined && exactWager(request.wagerUsd) !== String(wagerMicros)) {
    throw new ServiceError(ErrorCode.InvalidRequest, {
      message: "wagerUsd must be the grant's wager (or be left out) on a free-round spin",
      details: [{ path: "wagerUsd", message: `must equal the grant's wagerUsd, ${microsToUsd(wagerMicros)}` }],
    });
  }
}

/** The game's rules applied to a checked request: KS-4006, KS-4202, KS-4103; KS-4218 for a grant of another game. */
export function orderUnderRules(
  partner: PartnerAuth,
  request: SpinRequest,
  game: GameRules | null,
  grant: FreeRoundTerms | null,
  checked = false,
): SpinOrder {
  const own = playableGame(partner, game);
  if (grant && grant.gameId !== own.id) throw freeRoundUnavailable("another_game", grant.gameId);
  return {
    partner,
    game: own,
    playerId: request.playerId,
    // A grant's wager was within the game's bounds when it was made; it stays the round's wager.
    wagerMicros: grant ? grant.wagerMicros : wagerMicrosWithin(request.wagerUsd!, own),
    freeRoundsId: grant?.id ?? null,
    forceTier: request.forceTier ?? null,
    checked,
  };
}

const FREE_ROUND_REFUSALS: Record<FreeRoundRefusal, string> = {
  no_round_left: "the player has no round of this grant left",
  expired: "the grant has expired",
  cancelled: "the grant was cancelled",
  not_in_grant: "the player is not in the grant",
};

/** 409 KS-4218, saying which way the round is not available; nothing was used or written. */
export function freeRoundUnavailable(reason: FreeRoundRefusal | "another_game", gameId?: number): ServiceError {
  const why = reason === "another_game" ? `the grant is for game ${gameId}, not this one` : FREE_ROUND_REFUSALS[reason];
  return new ServiceError(ErrorCode.FreeRoundUnavailable, {
    message: `Free round not available: ${why}; nothing was used or written`,
    details: [{ path: "freeRoundsId", message: why }],
  });
}
