import type { Outcome } from "../outcome.js";
import type { ParSheetAnalysis } from "./analyze.js";
import { EntryCodec } from "./entries.js";
import { DigitSource, WeightedPicker } from "./random.js";

/** Up to this many possible paylines, T0 paylines are drawn from a precomputed list of losing ones. */
const ENUMERATED_PAYLINES_LIMIT = 65_536;
/** Up to this many possible fillers (symbols^(rows−1)), one digit draws a column's off-payline cells. */
const FILLER_DIGIT_LIMIT = 65_536;

/**
 * Draws complete outcomes of one PAR sheet: tier, then a combination of that tier by its relative
 * weight, then the full reel window. The payline (middle row) shows the combination for a win and a
 * uniformly drawn losing payline for T0; every other cell is a uniform symbol.
 *
 * Outcomes are written straight into the stored binary form (entries.ts: a tier byte and one byte
 * per cell), so a block costs a few integer writes per outcome and no per-outcome objects.
 */
export class OutcomeDrawer {
  readonly reels: number;
  readonly rows: number;
  /** The stored form of this sheet's entries. */
  readonly codec: EntryCodec;
  private readonly middleRow: number;
  private readonly symbolCount: number;
  private readonly tierPicker: WeightedPicker;
  private readonly combinations: Uint16Array[][];
  private readonly combinationPickers: (WeightedPicker | null)[];
  private readonly losing: LosingPaylines;
  private readonly digits: DigitSource;
  private readonly payline: Uint16Array;
  /** One digit per column for the cells off the payline, or null: one digit per cell. */
  private readonly fillers: DigitSource | null;

  constructor(sheet: ParSheetAnalysis) {
    const { document } = sheet;
    this.reels = document.layout.reels;
    this.rows = document.layout.rows;
    this.middleRow = Math.floor(this.rows / 2);
    this.symbolCount = document.symbols.length;
    this.codec = new EntryCodec({
      reels: this.reels,
      rows: this.rows,
      symbols: document.symbols.map((symbol) => symbol.id),
      tiers: sheet.tiers,
    });
    const symbolIndex = new Map(document.symbols.map((symbol, index) => [symbol.id, index] as const));
    this.tierPicker = new WeightedPicker(sheet.tiers.map((tier) => tier.weight));
    const byTier = sheet.tiers.map(() => [] as { symbols: Uint16Array; weight: number }[]);
    for (const combination of document.combinations) {
      const symbols = Uint16Array.from(combination.symbols, (id) => symbolIndex.get(id) ?? 0);
      byTier[Number(combination.tier.slice(1))]?.push({ symbols, weight: combination.weight });
    }
    this.combinations = byTier.map((list) => list.map((combination) => combination.symbols));
    this.combinationPickers = byTier.map((list) =>
      list.length > 1 ? new WeightedPicker(list.map((combination) => combination.weight)) : null,
    );
    this.digits = new DigitSource(this.symbolCount);
    this.losing = new LosingPaylines(this.symbolCount, this.reels, this.combinations.flat(), this.digits);
    this.payline = new Uint16Array(this.reels);
    const fillerRange = this.symbolCount ** (this.rows - 1);
    this.fillers = fillerRange <= FILLER_DIGIT_LIMIT ? new DigitSource(fillerRange) : null;
  }

  /** `count` tier indexes drawn independently by weight. */
  drawTiers(count: number): Uint8Array {
    const tiers = new Uint8Array(count);
    for (let index = 0; index < count; index++) tiers[index] = this.tierPicker.pick();
    return tiers;
  }

  /**
   * One complete outcome of the named tier, drawn as a block's entries are (`writeEntry`): a forced
   * sandbox spin's. Null when the sheet has no such tier.
   */
  drawOutcomeOfTier(tierName: string): Outcome | null {
    const tier = this.codec.layout.tiers.findIndex((candidate) => candidate.name === tierName);
    if (tier < 0) return null;
    const entry = Buffer.allocUnsafe(this.codec.entryBytes);
    this.writeEntry(tier, entry, 0);
    return this.codec.decode(entry, 0, 1)[0] as Outcome;
  }

  /** Writes one complete outcome of the given tier at `at`: its tier byte, then the window's cells. */
  writeEntry(tier: number, out: Buffer, at: number): void {
    const payline = this.payline;
    if (tier === 0) this.losing.draw(payline);
    else {
      const options = this.combinations[tier] as Uint16Array[];
      const picker = this.combinationPickers[tier];
      payline.set(options[picker ? picker.pick() : 0] as Uint16Array);
    }
    out[at++] = tier;
    const { rows, middleRow, symbolCount, fillers } = this;
    for (let reel = 0; reel < this.reels; reel++) {
      // A uniform digit in base symbols^(rows−1) is rows−1 independent uniform cells.
      let filler = fillers ? fillers.next() : 0;
      for (let row = 0; row < rows; row++) {
        if (row === middleRow) out[at++] = payline[reel] as number;
        else if (fillers) {
          const cell = filler % symbolCount;
          out[at++] = cell;
          filler = (filler - cell) / symbolCount;
        } else out[at++] = this.digits.next();
      }
    }
  }
}

/** Paylines (one symbol index per reel) that match no winning combination, drawn uniformly. */
class LosingPaylines {
  private readonly enumerated: Uint32Array | null;
  /** Uniform indexes into `enumerated`, several per randomInt call. */
  private readonly pick: DigitSource | null;
  private readonly winning: Set<string>;

  constructor(
    private readonly symbolCount: number,
    private readonly reels: number,
    winning: Uint16Array[],
    private readonly digits: DigitSource,
  ) {
    this.winning = new Set(winning.map((symbols) => symbols.join(",")));
    const total = symbolCount ** reels;
    if (total <= ENUMERATED_PAYLINES_LIMIT) {
      const winningCodes = new Set(winning.map((symbols) => this.codeOf(symbols)));
      const losing: number[] = [];
      for (let code = 0; code < total; code++) if (!winningCodes.has(code)) losing.push(code);
      this.enumerated = Uint32Array.from(losing);
      this.pick = new DigitSource(losing.length);
    } else {
      this.enumerated = null;
      this.pick = null;
    }
  }

  draw(out: Uint16Array): void {
    if (this.enumerated) {
      let code = this.enumerated[(this.pick as DigitSource).next()] as number;
      for (let reel = 0; reel < this.reels; reel++) {
        out[reel] = code % this.symbolCount;
        code = Math.floor(code / this.symbolCount);
      }
      return;
    }
    // More than 65,536 paylines and at most 10,000 winning ones: a rejection is rare.
    do {
      for (let reel = 0; reel < this.reels; reel++) out[reel] = this.digits.next();
    } while (this.winning.has(out.join(",")));
  }

  private codeOf(symbols: Uint16Array): number {
    let code = 0;
    for (let reel = this.reels - 1; reel >= 0; reel--) code = code * this.symbolCount + (symbols[reel] as number);
    return code;
  }
}
