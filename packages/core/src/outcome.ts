/**
 * A pre-computed outcome as it travels from a sealed block to a spin.
 * `reelSymbols[reel][row]` is the full visible window; the payline is the middle row.
 */
export interface Outcome {
  tier: string;
  /** Tier multiplier in millionths (PAR sheets allow 6 decimals), e.g. 2.5× = 2_500_000. */
  multiplierMillionths: number;
  reelSymbols: string[][];
}

/** Where an outcome lives in the record: entry `index` of block `blockId`. The spins table is unique on it. */
export interface OutcomePosition {
  blockId: number;
  index: number;
}

/** An outcome of a sealed block, as queued for serving. */
export interface QueuedOutcome extends Outcome, OutcomePosition {}

/**
 * A Redis list item (what the spin path pops) is one of two forms:
 * - compact, `~<blockId>.<index>.<entry>`: the entry's stored bytes (tier index, then one symbol
 *   index per cell, entries.ts) in lowercase hex. 30–40 bytes for a 3×3 game, so Redis keeps it in
 *   one allocation (≤ 44 bytes) and an RPUSH of a block costs it about half of what ~120 bytes of
 *   JSON did; the spin path reads the tier and symbols from the block's header (cached per block).
 *   What the blocks worker writes for every block in the binary form.
 * - JSON `{b, i, t, m, r}`, self-contained: blocks sealed in the legacy JSON form, and test fixtures.
 */
export type QueueItem = OutcomePosition & ({ outcome: Outcome } | { entry: Buffer });

const COMPACT_ITEM = /^~(\d{1,15})\.(\d{1,9})\.((?:[0-9a-f]{2})+)$/;

/** How every compact item of block `blockId` begins (and no item of another block). */
export function compactItemPrefix(blockId: number): string {
  return `~${blockId}.`;
}

/** The compact item of entry `index` of block `blockId`, whose stored bytes are `entry`. */
export function encodeCompactItem(blockId: number, index: number, entry: Uint8Array): string {
  return `${compactItemPrefix(blockId)}${index}.${Buffer.from(entry.buffer, entry.byteOffset, entry.byteLength).toString("hex")}`;
}

/** Reads either form of a queue item; throws on anything else. */
export function parseQueueItem(item: string): QueueItem {
  const compact = COMPACT_ITEM.exec(item);
  if (compact) {
    return { blockId: Number(compact[1]), index: Number(compact[2]), entry: Buffer.from(compact[3] as string, "hex") };
  }
  const { blockId, index, ...outcome } = decodeQueuedOutcome(item);
  if (!Number.isSafeInteger(blockId) || !Number.isSafeInteger(index)) throw new Error("not a queue item");
  return { blockId, index, outcome };
}

/**
 * The JSON form of a queue item: compact JSON `{b, i, t, m, r}`. Self-contained, so a spin needs no
 * PAR-sheet look-up to answer.
 */
export function encodeQueuedOutcome(outcome: QueuedOutcome): string {
  return JSON.stringify({
    b: outcome.blockId,
    i: outcome.index,
    t: outcome.tier,
    m: outcome.multiplierMillionths,
    r: outcome.reelSymbols,
  });
}

export function decodeQueuedOutcome(item: string): QueuedOutcome {
  const raw = JSON.parse(item) as { b: number; i: number; t: string; m: number; r: string[][] };
  return { blockId: raw.b, index: raw.i, tier: raw.t, multiplierMillionths: raw.m, reelSymbols: raw.r };
}

export const CELEBRATIONS = ["none", "small", "big", "mega"] as const;
export type Celebration = (typeof CELEBRATIONS)[number];

export interface Presentation {
  comboString: string;
  reelSymbols: string[][];
  animationHints: {
    winLine: number[] | null;
    celebration: Celebration;
    highlight: boolean[][];
  };
}

const MILLION = 1_000_000;

function celebrationFor(tier: string, multiplierMillionths: number): Celebration {
  if (tier === "T0" || multiplierMillionths === 0) return "none";
  if (multiplierMillionths < 10 * MILLION) return "small";
  if (multiplierMillionths < 100 * MILLION) return "big";
  return "mega";
}

/** What the player sees: the payline (middle row) as text, the window, and animation hints. */
export function presentationOf(outcome: Outcome): Presentation {
  const rows = outcome.reelSymbols[0]?.length ?? 0;
  const payline = Math.floor(rows / 2);
  const isWin = outcome.tier !== "T0";
  return {
    comboString: outcome.reelSymbols.map((reel) => reel[payline]).join("-"),
    reelSymbols: outcome.reelSymbols,
    animationHints: {
      winLine: isWin ? outcome.reelSymbols.map(() => payline) : null,
      celebration: celebrationFor(outcome.tier, outcome.multiplierMillionths),
      highlight: outcome.reelSymbols.map((reel) => reel.map((_, row) => isWin && row === payline)),
    },
  };
}
