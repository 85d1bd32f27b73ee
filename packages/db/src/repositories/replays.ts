import { sql } from "drizzle-orm";
import type { Database } from "../client.js";
import { games } from "../schema/games.js";
import { parSheets } from "../schema/par-sheets.js";
import { type SpinVerification, spinVerifications } from "./fairness.js";
import { findSpin, type RecalledSpin } from "./spin-voids.js";

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

/**
 * The spin a replay link names, whoever's it is (the link was signed for it), or null. Three
 * statements: the spin (a few daily partitions, by its id's time), then at once its game's name with
 * the symbols of its sheet (not the whole document) and its block with the proof.
 */
export async function findReplaySpin(db: Database, spinId: string): Promise<ReplaySpin | null> {
  const found = await findSpin(db, spinId);
  if (!found) return null;
  const { spin } = found;
  const [[game], verifications] = await Promise.all([
    db.execute<{ name: string; symbols: SheetSymbol[] }>(sql`
      select g.name, s.document -> 'symbols' as symbols
      from ${games} g join ${parSheets} s on s.id = g.par_sheet_id where g.id = ${spin.gameId}`),
    spin.blockId === null || spin.outcomeIndex === null
      ? new Map<string, SpinVerification>()
      : spinVerifications(db, [{ spinId, blockId: spin.blockId, index: spin.outcomeIndex }]),
  ]);
  if (!game) throw new Error(`spin ${spinId}: its game ${spin.gameId} is missing`);
  return {
    ...found,
    gameName: game.name,
    symbols: game.symbols.map((symbol) => ({ id: symbol.id, name: symbol.name.trim() })),
    verification: verifications.get(spinId) ?? null,
  };
}
