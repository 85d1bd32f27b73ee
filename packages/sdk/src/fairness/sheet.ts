import type { ParSheetDocument } from "../types.js";
import type { Keystream } from "./keystream.js";

const TWO_32 = 4_294_967_296;

/** Picks an index with probability weight / Σ weights: position = uniform below Σ, then the range holding it. */
export class WeightedPick {
  private readonly cumulative: number[] | bigint[];
  private readonly total: number | bigint;

  constructor(weights: readonly number[]) {
    const total = weights.reduce((sum, weight) => sum + BigInt(weight), 0n);
    if (weights.length === 0 || total <= 0n) throw new RangeError("needs positive weights");
    let running = 0n;
    const cumulative = weights.map((weight) => {
      running += BigInt(weight);
      return running;
    });
    // Up to 2^32 every partial sum is an exact double and one word decides the position.
    if (total <= BigInt(TWO_32)) {
      this.cumulative = cumulative.map(Number);
      this.total = Number(total);
    } else {
      this.cumulative = cumulative;
      this.total = total;
    }
  }

  pick(stream: Keystream): number {
    const position = typeof this.total === "number" ? stream.below(this.total) : stream.belowBig(this.total);
    const cumulative = this.cumulative;
    let low = 0;
    let high = cumulative.length - 1;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if ((cumulative[mid] as number | bigint) > position) high = mid;
      else low = mid + 1;
    }
    return low;
  }
}

/** What the leaves of stored entries need: the symbol ids and tier texts their indexes stand for. */
export interface LeafLayout {
  reels: number;
  rows: number;
  symbols: readonly string[];
  tiers: readonly { name: string; multiplier: string }[];
}

/** The shortest exact decimal of a multiplier with at most 6 decimal places: `2`, `1.5`, `9.999999`. */
export function multiplierText(multiplier: number): string {
  return multiplier.toFixed(6).replace(/\.?0+$/, "");
}

/**
 * A PAR sheet document compiled for drawing: symbols and tiers in the document's order (their
 * positions are the indexes every draw uses), each winning tier's combinations with their weights,
 * and the set of winning paylines a T0 payline must avoid.
 */
export class CompiledSheet {
  readonly reels: number;
  readonly rows: number;
  readonly drawMode: "independent" | "finite_pool";
  readonly symbols: readonly string[];
  readonly tiers: readonly { name: string; weight: number; multiplier: number }[];
  /** Σ tier weights: the length of a finite_pool cycle. */
  readonly cycleLength: number;
  readonly tierPick: WeightedPick;
  /** Per tier index: its combinations (one symbol index per reel), in document order. */
  readonly combinations: readonly Uint16Array[][];
  /** Per tier index: the pick among several combinations by their relative weights, else null. */
  readonly combinationPicks: readonly (WeightedPick | null)[];
  readonly layout: LeafLayout;
  private readonly winning: Set<number | string>;
  /** Paylines are keyed by a number while symbols^reels stays an exact double, else by text. */
  private readonly numericKeys: boolean;

  constructor(document: ParSheetDocument) {
    this.reels = document.layout.reels;
    this.rows = document.layout.rows;
    this.drawMode = document.drawMode ?? "independent";
    this.symbols = document.symbols.map((symbol) => symbol.id);
    this.tiers = document.prizeTiers.map((tier) => ({
      name: tier.tier,
      weight: tier.weight,
      multiplier: tier.multiplier,
    }));
    this.cycleLength = this.tiers.reduce((sum, tier) => sum + tier.weight, 0);
    this.tierPick = new WeightedPick(this.tiers.map((tier) => tier.weight));
    const symbolIndex = new Map(this.symbols.map((id, index) => [id, index] as const));
    const tierIndex = new Map(this.tiers.map((tier, index) => [tier.name, index] as const));
    const byTier = this.tiers.map(() => [] as { symbols: Uint16Array; weight: number }[]);
    for (const combination of document.combinations) {
      const symbols = Uint16Array.from(combination.symbols, (id) => {
        const index = symbolIndex.get(id);
        if (index === undefined) throw new Error(`combination names unknown symbol ${id}`);
        return index;
      });
      const tier = tierIndex.get(combination.tier);
      if (tier === undefined) throw new Error(`combination names unknown tier ${combination.tier}`);
      byTier[tier]?.push({ symbols, weight: combination.weight });
    }
    this.combinations = byTier.map((list) => list.map((combination) => combination.symbols));
    this.combinationPicks = byTier.map((list) =>
      list.length > 1 ? new WeightedPick(list.map((combination) => combination.weight)) : null,
    );
    this.numericKeys = this.symbols.length ** this.reels <= Number.MAX_SAFE_INTEGER;
    this.winning = new Set(byTier.flat().map((combination) => this.keyOf(combination.symbols)));
    this.layout = {
      reels: this.reels,
      rows: this.rows,
      symbols: this.symbols,
      tiers: this.tiers.map((tier) => ({ name: tier.name, multiplier: multiplierText(tier.multiplier) })),
    };
  }

  isWinning(line: Uint16Array): boolean {
    return this.winning.has(this.keyOf(line));
  }

  private keyOf(line: Uint16Array): number | string {
    if (!this.numericKeys) return line.join(",");
    let key = 0;
    for (let reel = this.reels - 1; reel >= 0; reel--) key = key * this.symbols.length + (line[reel] as number);
    return key;
  }
}
