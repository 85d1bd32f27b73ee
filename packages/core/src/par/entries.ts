import type { Outcome } from "../outcome.js";
import { writeDecimal } from "./decimal.js";

/**
 * The stored form of a block's entries (`blocks.entries`, bytea), and what its SHA-256 commitment
 * covers. Binary and self-describing, so an auditor needs nothing but the row:
 *
 * ```
 * "KSB1"                        magic and format version (4 bytes)
 * u8 reels, u8 rows, u16 symbols, u16 tiers, u32 size   (little-endian)
 * per symbol: u8 length, id (ASCII)
 * per tier:   u8 length, name (ASCII), u8 length, multiplier in millionths (ASCII decimal)
 * per entry:  u8 tier index, then reels × rows u8 symbol indexes, r[reel][row] reel by reel
 * ```
 *
 * Symbols and tiers are at most 256 each (PAR sheet limits), so every index is one byte and an
 * entry of a 5×3 game is 16 bytes instead of ~100 of JSON. One encoding per content: `verifyBlock`
 * re-encodes the header and checks every index, so equal outcomes always hash alike.
 */
export interface EntryLayout {
  reels: number;
  rows: number;
  symbols: readonly string[];
  tiers: readonly { name: string; multiplierMillionths: number }[];
}

const MAGIC = Buffer.from("KSB1", "latin1");
const FIXED_HEADER = 14;
const SIZE_OFFSET = 10;
/** Column JSON is precomputed up to this many possible columns (symbols^rows). */
const COLUMN_TABLE_LIMIT = 4096;
const COMMA = 0x2c;
const OPEN = 0x5b;
const CLOSE = 0x5d;
const ascii = (text: string) => Buffer.from(text, "latin1");

/**
 * A block's Redis queue items, written one at a time into the caller's buffer: exactly
 * `encodeQueuedOutcome` of each entry, by index in serving order. The caller separates or frames
 * them (newlines in `blockQueueItems`, RESP in the RPUSH encoder of @outcomes/blocks).
 */
export interface QueueItemWriter {
  /** Items are indexes 0 to size − 1. */
  readonly size: number;
  /** No item is longer. */
  readonly maxItemBytes: number;
  /** The shortest and the longest item whose index has `indexDigits` decimal digits. */
  itemBytes(indexDigits: number): { min: number; max: number };
  /** Writes item `index` into `out` at `at`; returns where it ends. */
  write(index: number, out: Buffer, at: number): number;
}

export class EntryCodec {
  readonly header: Buffer;
  readonly entryBytes: number;
  private readonly cells: number;
  private readonly symbolJson: Buffer[];
  private readonly tierJson: Buffer[];
  private readonly columns: Buffer[] | null;
  private readonly maxItemBytes: number;
  /** The shortest and longest `writeBody` output. */
  private readonly bodyBytes: { min: number; max: number };

  constructor(readonly layout: EntryLayout) {
    const { reels, rows, symbols, tiers } = layout;
    this.cells = reels * rows;
    this.entryBytes = 1 + this.cells;
    this.header = encodeHeader(layout);
    this.symbolJson = symbols.map((id) => ascii(JSON.stringify(id)));
    this.tierJson = tiers.map((tier) =>
      ascii(`"t":${JSON.stringify(tier.name)},"m":${tier.multiplierMillionths},"r":[`),
    );
    this.columns = symbols.length ** rows <= COLUMN_TABLE_LIMIT ? this.columnTable() : null;
    const longest = (list: Buffer[]) => Math.max(...list.map((bytes) => bytes.length));
    // `{"b":` + id + `,"i":` + index + `,` + tier part + window + `]}` + newline, generously.
    this.maxItemBytes = 64 + longest(this.tierJson) + reels * (3 + rows * (longest(this.symbolJson) + 1));
    const lengths = (list: Buffer[]) => list.map((bytes) => bytes.length);
    const columnLengths = this.columns
      ? lengths(this.columns)
      : [Math.min(...lengths(this.symbolJson)), Math.max(...lengths(this.symbolJson))].map(
          (symbol) => rows * (symbol + 1) + 1,
        );
    // The tier part, the columns, a comma between columns, the closing `]}`.
    const body = (pick: (values: number[]) => number) =>
      pick(lengths(this.tierJson)) + reels * pick(columnLengths) + reels + 1;
    this.bodyBytes = { min: body((values) => Math.min(...values)), max: body((values) => Math.max(...values)) };
  }

  /** Reads the header of stored entries; throws on anything that is not a well-formed block. */
  static read(entries: Uint8Array): { codec: EntryCodec; size: number; bodyStart: number } {
    const bytes = Buffer.from(entries.buffer, entries.byteOffset, entries.byteLength);
    if (bytes.length < FIXED_HEADER || !bytes.subarray(0, 4).equals(MAGIC)) throw new Error("not a KSB1 block");
    const reels = bytes.readUInt8(4);
    const rows = bytes.readUInt8(5);
    const symbolCount = bytes.readUInt16LE(6);
    const tierCount = bytes.readUInt16LE(8);
    const size = bytes.readUInt32LE(10);
    let at = FIXED_HEADER;
    const text = () => {
      const length = bytes.readUInt8(at);
      if (at + 1 + length > bytes.length) throw new Error("truncated block header");
      const value = bytes.toString("latin1", at + 1, at + 1 + length);
      at += 1 + length;
      return value;
    };
    const symbols = Array.from({ length: symbolCount }, text);
    const tiers = Array.from({ length: tierCount }, () => ({ name: text(), multiplierMillionths: Number(text()) }));
    const codec = new EntryCodec({ reels, rows, symbols, tiers });
    if (!codec.headerFor(size).equals(bytes.subarray(0, at))) throw new Error("block header is not canonical");
    if (bytes.length !== at + size * codec.entryBytes) throw new Error("block body length does not match its size");
    return { codec, size, bodyStart: at };
  }

  /** The header of a block of `size` entries. */
  headerFor(size: number): Buffer {
    const header = Buffer.from(this.header);
    header.writeUInt32LE(size, SIZE_OFFSET);
    return header;
  }

  /** True when every tier and symbol index of the body is in range. */
  indexesInRange(entries: Uint8Array, bodyStart: number): boolean {
    const symbolCount = this.layout.symbols.length;
    const tierCount = this.layout.tiers.length;
    for (let at = bodyStart; at < entries.length; at += this.entryBytes) {
      if ((entries[at] as number) >= tierCount) return false;
      for (let cell = 1; cell <= this.cells; cell++) if ((entries[at + cell] as number) >= symbolCount) return false;
    }
    return true;
  }

  decode(entries: Uint8Array, bodyStart: number, size: number): Outcome[] {
    const { reels, rows, symbols, tiers } = this.layout;
    const outcomes = new Array<Outcome>(size);
    for (let index = 0; index < size; index++) {
      let at = bodyStart + index * this.entryBytes;
      const tier = tiers[entries[at++] as number] as EntryLayout["tiers"][number];
      const reelSymbols: string[][] = [];
      for (let reel = 0; reel < reels; reel++) {
        const column: string[] = [];
        for (let row = 0; row < rows; row++) column.push(symbols[entries[at++] as number] as string);
        reelSymbols.push(column);
      }
      outcomes[index] = { tier: tier.name, multiplierMillionths: tier.multiplierMillionths, reelSymbols };
    }
    return outcomes;
  }

  /**
   * The queue items of the block of `size` entries at `bodyStart`, written from precomputed JSON
   * pieces (no string per item).
   */
  queueItemWriter(entries: Uint8Array, bodyStart: number, size: number, blockId: number): QueueItemWriter {
    const head = ascii(`{"b":${blockId},"i":`);
    const { min, max } = this.bodyBytes;
    return {
      size,
      maxItemBytes: this.maxItemBytes + head.length,
      // The head, the index, a comma, the body.
      itemBytes: (indexDigits) => ({
        min: head.length + indexDigits + 1 + min,
        max: head.length + indexDigits + 1 + max,
      }),
      write: (index, out, at) => {
        out.set(head, at);
        const end = writeDecimal(out, at + head.length, index);
        out[end] = COMMA;
        return this.writeBody(entries, bodyStart + index * this.entryBytes, out, end + 1);
      },
    };
  }

  /** Writes `"t":…,"m":…,"r":[[…],…]}` of the entry whose tier byte is at `cell`. */
  private writeBody(entries: Uint8Array, cell: number, out: Buffer, at: number): number {
    const { reels, rows } = this.layout;
    const tier = this.tierJson[entries[cell++] as number] as Buffer;
    out.set(tier, at);
    at += tier.length;
    for (let reel = 0; reel < reels; reel++, cell += rows) {
      if (reel > 0) out[at++] = COMMA;
      if (this.columns) {
        const code = this.columnCode(entries, cell);
        const column = this.columns[code] as Buffer;
        out.set(column, at);
        at += column.length;
      } else {
        out[at++] = OPEN;
        for (let row = 0; row < rows; row++) {
          if (row > 0) out[at++] = COMMA;
          const symbol = this.symbolJson[entries[cell + row] as number] as Buffer;
          out.set(symbol, at);
          at += symbol.length;
        }
        out[at++] = CLOSE;
      }
    }
    out[at++] = CLOSE;
    out[at++] = 0x7d; // }
    return at;
  }

  private columnCode(entries: Uint8Array, cell: number): number {
    const symbolCount = this.layout.symbols.length;
    let code = 0;
    for (let row = this.layout.rows - 1; row >= 0; row--) code = code * symbolCount + (entries[cell + row] as number);
    return code;
  }

  /** `["A","B","C"]` of every possible column, indexed by Σ symbol(row) × symbols^row. */
  private columnTable(): Buffer[] {
    const { rows, symbols } = this.layout;
    return Array.from({ length: symbols.length ** rows }, (_, code) => {
      const cells: string[] = [];
      let rest = code;
      for (let row = 0; row < rows; row++) {
        cells.push((this.symbolJson[rest % symbols.length] as Buffer).toString("latin1"));
        rest = Math.floor(rest / symbols.length);
      }
      return ascii(`[${cells.join(",")}]`);
    });
  }
}

function encodeHeader({ reels, rows, symbols, tiers }: EntryLayout): Buffer {
  const parts: Buffer[] = [MAGIC];
  const fixed = Buffer.alloc(FIXED_HEADER - MAGIC.length);
  fixed.writeUInt8(reels, 0);
  fixed.writeUInt8(rows, 1);
  fixed.writeUInt16LE(symbols.length, 2);
  fixed.writeUInt16LE(tiers.length, 4);
  parts.push(fixed); // the size (u32 at SIZE_OFFSET) is written per block by headerFor
  const text = (value: string) => {
    const bytes = ascii(value);
    if (bytes.length > 255) throw new RangeError("header text longer than 255 bytes");
    parts.push(Buffer.from([bytes.length]), bytes);
  };
  for (const id of symbols) text(id);
  for (const tier of tiers) {
    text(tier.name);
    text(String(tier.multiplierMillionths));
  }
  return Buffer.concat(parts);
}
