import { createHash } from "node:crypto";
import type { ParSheetDocument } from "../types.js";
import { Keystream, SALT_BYTES, SEED_BYTES, STREAMS, saltsAt } from "./keystream.js";
import { CompiledSheet } from "./sheet.js";

/** One entry of a block as the reveal lists it (without `spinId`). */
export interface DerivedEntry {
  index: number;
  prizeTier: string;
  multiplier: number;
  /** One array per reel: the visible symbol ids, top to bottom. */
  reelSymbols: string[][];
  /** 16 bytes, lowercase hex. */
  salt: string;
}

export interface BlockPosition {
  /** Entries in the block. */
  size: number;
  /** finite_pool: position of the block's first entry in its cycle; independent blocks: 0 (default). */
  offset?: number;
}

/** A seed as bytes: 32 bytes, or their 64 lowercase or uppercase hex digits. */
export function seedBytes(seed: string | Uint8Array): Buffer {
  const bytes = typeof seed === "string" && /^[0-9a-fA-F]{64}$/.test(seed) ? Buffer.from(seed, "hex") : seed;
  if (typeof bytes === "string" || bytes.length !== SEED_BYTES)
    throw new RangeError("a seed is 32 bytes (64 hex digits)");
  return Buffer.from(bytes);
}

/** `seedHash`: SHA-256 of the seed's 32 bytes, lowercase hex. */
export function seedHashOf(seed: string | Uint8Array): string {
  return createHash("sha256").update(seedBytes(seed)).digest("hex");
}

/** independent: `count` tiers, each drawn by weight from the tiers stream. */
export function drawTiers(sheet: CompiledSheet, seed: Uint8Array, count: number): Uint8Array {
  const stream = new Keystream(seed, STREAMS.tiers);
  const tiers = new Uint8Array(count);
  for (let index = 0; index < count; index++) tiers[index] = sheet.tierPick.pick(stream);
  return tiers;
}

/**
 * finite_pool: the cycle, `weight` entries of each tier in document order, Fisher–Yates shuffled
 * from the tiers stream (for last = length − 1 down to 1: swap last with a uniform index ≤ last).
 */
export function shuffleCycle(sheet: CompiledSheet, seed: Uint8Array): Uint8Array {
  const cycle = new Uint8Array(sheet.cycleLength);
  let offset = 0;
  sheet.tiers.forEach((tier, index) => {
    cycle.fill(index, offset, offset + tier.weight);
    offset += tier.weight;
  });
  const stream = new Keystream(seed, STREAMS.tiers);
  for (let last = cycle.length - 1; last > 0; last--) {
    const pick = stream.below(last + 1);
    const kept = cycle[last] as number;
    cycle[last] = cycle[pick] as number;
    cycle[pick] = kept;
  }
  return cycle;
}

/** Bytes per entry in `writeEntries`' layout: the tier index, then one symbol index per cell. */
export const entryBytes = (sheet: Pick<CompiledSheet, "reels" | "rows">) => 1 + sheet.reels * sheet.rows;

/**
 * The entries of the given tiers, drawn from the windows stream at `position` (the block's offset
 * in its cycle), written at `at`: per entry its tier index, then every cell reel by reel, top to
 * bottom, as symbol indexes. Per entry, in this order: the payline (a winning tier's combination,
 * picked by weight when it has several; for T0 one uniform symbol per reel, drawn again while it
 * equals a winning combination), then each cell off the payline, a uniform symbol.
 */
export function writeEntries(
  sheet: CompiledSheet,
  seed: Uint8Array,
  position: number,
  tiers: Uint8Array,
  out: Uint8Array,
  at: number,
): void {
  const { reels, rows, combinations, combinationPicks } = sheet;
  // About two words a cell (rejection and a losing line's redraws take a few more): a forced spin's
  // single entry reads a few hundred bytes of the stream, a block's entries whole 64 KiB chunks.
  const stream = new Keystream(seed, STREAMS.windows, position, tiers.length * reels * rows * 8);
  const symbolCount = sheet.symbols.length;
  const middle = rows >> 1;
  const line = new Uint16Array(reels);
  for (const tier of tiers) {
    if (tier === 0) {
      do {
        for (let reel = 0; reel < reels; reel++) line[reel] = stream.below(symbolCount);
      } while (sheet.isWinning(line));
    } else {
      const options = combinations[tier];
      if (!options || options.length === 0) throw new Error(`tier ${tier} has no combination`);
      const pick = combinationPicks[tier];
      line.set(options[pick ? pick.pick(stream) : 0] as Uint16Array);
    }
    out[at++] = tier;
    for (let reel = 0; reel < reels; reel++) {
      for (let row = 0; row < rows; row++) {
        out[at++] = row === middle ? (line[reel] as number) : stream.below(symbolCount);
      }
    }
  }
}

/**
 * Re-derives the entries of a block from its seed and its game's PAR sheet (the document as
 * uploaded), exactly as the service drew them: `independent` blocks from their own seed,
 * `finite_pool` blocks from their cycle's seed and their offset in the cycle.
 */
export function deriveBlockEntries(
  seed: string | Uint8Array,
  parSheet: ParSheetDocument,
  block: BlockPosition,
): DerivedEntry[] {
  const bytes = seedBytes(seed);
  const sheet = new CompiledSheet(parSheet);
  const offset = block.offset ?? 0;
  const tiers =
    sheet.drawMode === "finite_pool"
      ? shuffleCycle(sheet, bytes).subarray(offset, offset + block.size)
      : drawTiers(sheet, bytes, block.size);
  if (tiers.length !== block.size) throw new RangeError("the block runs past the end of its cycle");
  const stride = entryBytes(sheet);
  const body = new Uint8Array(block.size * stride);
  writeEntries(sheet, bytes, offset, tiers, body, 0);
  const salts = saltsAt(bytes, offset, block.size);
  return Array.from({ length: block.size }, (_, index) => {
    let at = index * stride;
    const tier = sheet.tiers[body[at++] as number] as CompiledSheet["tiers"][number];
    const reelSymbols = Array.from({ length: sheet.reels }, () =>
      Array.from({ length: sheet.rows }, () => sheet.symbols[body[at++] as number] as string),
    );
    return {
      index,
      prizeTier: tier.name,
      multiplier: tier.multiplier,
      reelSymbols,
      salt: salts.toString("hex", index * SALT_BYTES, (index + 1) * SALT_BYTES),
    };
  });
}
