import { randomInt } from "node:crypto";
import type { ParSheetAnalysis } from "./analyze.js";
import { DigitSource, WeightedPicker } from "./random.js";

/** Up to this many possible paylines, T0 paylines are drawn from a precomputed list of losing ones. */
const ENUMERATED_PAYLINES_LIMIT = 65_536;
/** Up to this many possible reel columns (symbols^rows), each column's bytes are precomputed. */
const PRECOMPUTED_COLUMNS_LIMIT = 65_536;

const ascii = (text: string) => Buffer.from(text, "latin1");
const OPEN = 0x5b; // [
const CLOSE = 0x5d; // ]
const COMMA = 0x2c;
const CLOSE_ENTRY = ascii("]}");

/** A byte buffer sized up front; entries are ASCII (symbol ids and tier names are restricted). */
export class ByteWriter {
  readonly bytes: Buffer;
  length = 0;

  constructor(capacity: number) {
    this.bytes = Buffer.allocUnsafe(capacity);
  }

  put(chunk: Uint8Array): void {
    this.bytes.set(chunk, this.length);
    this.length += chunk.length;
  }

  byte(value: number): void {
    this.bytes[this.length++] = value;
  }
}

/**
 * Draws complete outcomes of one PAR sheet: tier, then a combination of that tier by its relative
 * weight, then the full reel window. The payline (middle row) shows the combination for a win and a
 * uniformly drawn losing payline for T0; every other cell is a uniform symbol.
 *
 * Outcomes are written straight into bytes (the entry's JSON `"t":…,"m":…,"r":…}` without its
 * opening brace) from precomputed pieces, so a block costs a few byte copies per outcome and no
 * per-outcome objects: generation runs at well over a million outcomes a second.
 */
export class OutcomeDrawer {
  readonly reels: number;
  readonly rows: number;
  /** Upper bound of one entry body's length in bytes. */
  readonly maxBodyBytes: number;
  private readonly middleRow: number;
  private readonly symbolBytes: Buffer[];
  private readonly tierPrefix: Buffer[];
  private readonly tierPicker: WeightedPicker;
  private readonly combinations: Uint16Array[][];
  private readonly combinationPickers: (WeightedPicker | null)[];
  private readonly losing: LosingPaylines;
  private readonly digits: DigitSource;
  private readonly payline: Uint16Array;
  private readonly columns: ReelColumns | null;

  constructor(sheet: ParSheetAnalysis) {
    const { document } = sheet;
    this.reels = document.layout.reels;
    this.rows = document.layout.rows;
    this.middleRow = Math.floor(this.rows / 2);
    const symbolIndex = new Map(document.symbols.map((symbol, index) => [symbol.id, index] as const));
    this.symbolBytes = document.symbols.map((symbol) => ascii(JSON.stringify(symbol.id)));
    this.tierPrefix = sheet.tiers.map((tier) =>
      ascii(`"t":${JSON.stringify(tier.name)},"m":${tier.multiplierMillionths},"r":`),
    );
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
    this.digits = new DigitSource(document.symbols.length);
    this.losing = new LosingPaylines(document.symbols.length, this.reels, this.combinations.flat(), this.digits);
    this.payline = new Uint16Array(this.reels);
    this.columns =
      document.symbols.length ** this.rows <= PRECOMPUTED_COLUMNS_LIMIT
        ? new ReelColumns(this.symbolBytes, this.rows, this.middleRow)
        : null;
    const longestSymbol = Math.max(...this.symbolBytes.map((bytes) => bytes.length));
    const longestPrefix = Math.max(...this.tierPrefix.map((bytes) => bytes.length));
    this.maxBodyBytes = longestPrefix + this.reels * (2 + this.rows * (longestSymbol + 1)) + 2;
  }

  /** `count` tier indexes drawn independently by weight. */
  drawTiers(count: number): Uint8Array {
    const tiers = new Uint8Array(count);
    for (let index = 0; index < count; index++) tiers[index] = this.tierPicker.pick();
    return tiers;
  }

  /** Writes one complete outcome of the given tier: its JSON entry without the opening brace. */
  writeEntryBody(tier: number, out: ByteWriter): void {
    const payline = this.payline;
    if (tier === 0) this.losing.draw(payline);
    else {
      const options = this.combinations[tier] as Uint16Array[];
      const picker = this.combinationPickers[tier];
      payline.set(options[picker ? picker.pick() : 0] as Uint16Array);
    }
    out.put(this.tierPrefix[tier] as Buffer);
    if (this.columns) this.columns.write(payline, out);
    else this.writeWindow(payline, out);
    out.put(CLOSE_ENTRY);
  }

  /** The window cell by cell, for layouts with too many possible columns to precompute. */
  private writeWindow(payline: Uint16Array, out: ByteWriter): void {
    out.byte(OPEN);
    for (let reel = 0; reel < this.reels; reel++) {
      if (reel > 0) out.byte(COMMA);
      out.byte(OPEN);
      for (let row = 0; row < this.rows; row++) {
        if (row > 0) out.byte(COMMA);
        out.put(this.symbolBytes[row === this.middleRow ? (payline[reel] as number) : this.digits.next()] as Buffer);
      }
      out.byte(CLOSE);
    }
  }
}

/**
 * Every possible reel column (`["A","B","C"]`) as bytes, indexed by payline symbol and filler. The
 * filler (the cells off the payline) is one uniform digit in base symbols^(rows−1), which makes each
 * of those cells an independent uniform symbol.
 */
class ReelColumns {
  private readonly first: Buffer[];
  private readonly next: Buffer[];
  private readonly fillers: number;
  private readonly filler: DigitSource;

  constructor(symbolBytes: Buffer[], rows: number, middleRow: number) {
    const symbols = symbolBytes.length;
    this.fillers = symbols ** (rows - 1);
    this.filler = new DigitSource(this.fillers);
    this.first = new Array<Buffer>(symbols * this.fillers);
    this.next = new Array<Buffer>(symbols * this.fillers);
    for (let middle = 0; middle < symbols; middle++) {
      for (let filler = 0; filler < this.fillers; filler++) {
        const cells: string[] = [];
        let rest = filler;
        for (let row = 0; row < rows; row++) {
          const symbol = row === middleRow ? middle : rest % symbols;
          if (row !== middleRow) rest = Math.floor(rest / symbols);
          cells.push((symbolBytes[symbol] as Buffer).toString("latin1"));
        }
        const column = `[${cells.join(",")}]`;
        this.first[middle * this.fillers + filler] = ascii(`[${column}`);
        this.next[middle * this.fillers + filler] = ascii(`,${column}`);
      }
    }
  }

  write(payline: Uint16Array, out: ByteWriter): void {
    out.put(this.first[(payline[0] as number) * this.fillers + this.filler.next()] as Buffer);
    for (let reel = 1; reel < payline.length; reel++) {
      out.put(this.next[(payline[reel] as number) * this.fillers + this.filler.next()] as Buffer);
    }
  }
}

/** Paylines (one symbol index per reel) that match no winning combination, drawn uniformly. */
class LosingPaylines {
  private readonly enumerated: Uint32Array | null;
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
    } else {
      this.enumerated = null;
    }
  }

  draw(out: Uint16Array): void {
    if (this.enumerated) {
      let code = this.enumerated[randomInt(this.enumerated.length)] as number;
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
