import type { Environment } from "@outcomes/core";
import type { Database } from "../client.js";
import { type ProvableBlockRow, readReplaySpinRow } from "./fairness.js";
import { type SpinVerification, verificationOf } from "./proofs.js";
import type { RecalledSpin } from "./spin-voids.js";
import { spinTimeWindow } from "./spins.js";

// Replay pages (CONTRACT §17): any spin a replay link names, with what its page shows beside it.

/** A symbol of a PAR sheet as its document lists it. */
export interface SheetSymbol {
  id: string;
  name: string;
}

/** A spin as its replay page shows it: the spin, its game's name and symbols, its proof and block. */
export interface ReplaySpin extends RecalledSpin {
  gameName: string;
  /** The game's PAR sheet's symbols, in the document's order. */
  symbols: SheetSymbol[];
  /** Null for a forced sandbox spin (no block) and one whose block was sealed before provable fairness. */
  verification: SpinVerification | null;
}

/** The row of `readReplaySpinRow`: the spin's columns are named `spin_…`, the block's the plain names. */
type ReplayRow = ProvableBlockRow & {
  spin_id: string;
  spin_partner: string;
  spin_environment: Environment;
  spin_game: number;
  spin_player: string;
  spin_block: string | null;
  spin_index: number | null;
  spin_tier: string;
  spin_multiplier: string;
  spin_wager: string;
  spin_payout: string;
  spin_balance: string;
  spin_presentation: unknown;
  spin_created_at: string;
  external_id: string;
  reason: string | null;
  voided_at: string | null;
  grant_id: string | null;
  rounds_left: number | null;
  game_name: string;
  symbols: SheetSymbol[];
};

/**
 * The spin a replay link names, whoever's it is (the link was signed for it), or null: one statement
 * for the spin, all its page shows and its proof.
 */
export async function findReplaySpin(db: Database, spinId: string): Promise<ReplaySpin | null> {
  const dated = spinTimeWindow(spinId);
  if (dated === null) return null;
  const row = await readReplaySpinRow<ReplayRow>(db, spinId, dated);
  if (!row) return null;
  const blockId = row.spin_block === null ? null : Number(row.spin_block);
  const index = row.spin_index;
  const verification =
    blockId === null || index === null ? null : await verificationOf(db, row, { spinId, blockId, index });
  return {
    spin: {
      id: row.spin_id,
      partnerId: row.spin_partner,
      environment: row.spin_environment,
      gameId: row.spin_game,
      playerId: Number(row.spin_player),
      blockId,
      outcomeIndex: index,
      forced: blockId === null,
      prizeTier: row.spin_tier,
      multiplierMillionths: Number(row.spin_multiplier),
      wagerMicros: Number(row.spin_wager),
      payoutMicros: Number(row.spin_payout),
      balanceAfterMicros: Number(row.spin_balance),
      presentation: row.spin_presentation,
      createdAt: new Date(row.spin_created_at),
    },
    externalPlayerId: row.external_id,
    voided:
      row.reason !== null && row.voided_at !== null ? { reason: row.reason, voidedAt: new Date(row.voided_at) } : null,
    freeRound:
      row.grant_id !== null && row.rounds_left !== null
        ? { freeRoundsId: row.grant_id, roundsLeft: row.rounds_left }
        : null,
    gameName: row.game_name,
    symbols: row.symbols.map((symbol) => ({ id: symbol.id, name: symbol.name.trim() })),
    verification,
  };
}
