import { assertValidParSheet, ErrorCode, type Outcome, OutcomeDrawer, ServiceError } from "@outcomes/core";
import { parSheetDocument, type SqlClient } from "@outcomes/db";
import { setBounded } from "../bounded-map.js";
import type { GameRules } from "./game-cache.js";

/** A process forces outcomes of a handful of sandbox sheets at a time; older entries are dropped. */
const MAX_DRAWERS = 100;
/** Tier names are `T0`..`T255` (a sheet has at most 256 tiers): 16 characters leave room, no more. */
export const FORCE_TIER_MAX_LENGTH = 16;

/**
 * Outcomes of forced sandbox spins (CONTRACT §11): a random combination of the requested tier of the
 * game's PAR sheet, drawn by the blocks' own code (`OutcomeDrawer`, OS CSPRNG) and never taken from
 * the game's queue. A sheet's document never changes once uploaded, so its compiled drawer is kept.
 */
export class ForcedOutcomes {
  private readonly drawers = new Map<string, OutcomeDrawer>();

  /**
   * An outcome of `tier`; KS-4101 when the game's sheet has no such tier. A sheet not compiled yet
   * is read on `client` (a keyed spin's own transaction), and a read in flight is not shared, for the
   * reason `BlockFactsCache` gives.
   */
  async draw(game: GameRules, tier: string, client: SqlClient): Promise<Outcome> {
    const outcome = (await this.drawerOf(game.parSheetId, client)).drawOutcomeOfTier(tier);
    if (!outcome) {
      throw new ServiceError(ErrorCode.InvalidRequest, {
        // The request's schema bounds the name; the message quotes no more than that bound regardless.
        message: `forceTier ${JSON.stringify(tier.slice(0, FORCE_TIER_MAX_LENGTH))} is not a tier of the game's PAR sheet`,
        details: [{ path: "forceTier", message: "not a tier of the game's PAR sheet" }],
      });
    }
    return outcome;
  }

  private async drawerOf(parSheetId: string, client: SqlClient): Promise<OutcomeDrawer> {
    const cached = this.drawers.get(parSheetId);
    if (cached) return cached;
    const drawer = new OutcomeDrawer(assertValidParSheet(await parSheetDocument(client, parSheetId)));
    setBounded(this.drawers, parSheetId, drawer, MAX_DRAWERS);
    return drawer;
  }
}
