import type { Outcome } from "../outcome.js";

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
const NEWLINE = 0x0a;
const CR = 0x0d;
const DOLLAR = 0x24;
/** Before a RESP item: `$`, up to 6 digits of length, CRLF. */
const RESP_HEADER_ROOM = 9;
/** The header and the CRLF after the item. */
const RESP_FRAMING = RESP_HEADER_ROOM + 2;
const ascii = (text: string) => Buffer.from(text, "latin1");

/**
 * A buffer the caller lends to `queueItems` to write into instead of allocating ~1.5 MB per block
 * (which costs garbage collections): the result is a view of it, valid until the next use.
 */
export interface ItemScratch {
  bytes: Buffer;
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
   * The block's Redis queue items, in serving order: exactly `encodeQueuedOutcome` of each entry,
   * written from precomputed JSON pieces (no string per item). Without `rpush`: separated by
   * newlines. With `rpush` (a list name): the complete RESP command `RPUSH list item…`, each item a
   * bulk string, written once here so the client library does not encode 10,000 arguments.
   * `skip(index)` leaves out outcomes already used (queue rebuilds).
   */
  queueItems(
    entries: Uint8Array,
    bodyStart: number,
    size: number,
    blockId: number,
    options: { skip?: (index: number) => boolean; rpush?: string; scratch?: ItemScratch } = {},
  ): { bytes: Buffer; count: number } {
    const { skip, rpush, scratch } = options;
    const head = ascii(`{"b":${blockId},"i":`);
    // The RPUSH header depends on the count, known at the end: room for the longest one first.
    const headerRoom = rpush === undefined ? 0 : 40 + Buffer.byteLength(rpush);
    const capacity = headerRoom + size * (this.maxItemBytes + head.length + RESP_FRAMING);
    if (scratch && scratch.bytes.length < capacity) scratch.bytes = Buffer.allocUnsafe(capacity);
    const out = scratch ? scratch.bytes : Buffer.allocUnsafe(capacity);
    let at = headerRoom;
    let count = 0;
    const resp = rpush !== undefined;
    // By number of index digits: the digits of every such item's length, or 0 when they vary.
    const lengthWidths = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((digits) => {
      const shortest = decimalDigits(head.length + digits + 1 + this.bodyBytes.min);
      return shortest === decimalDigits(head.length + digits + 1 + this.bodyBytes.max) ? shortest : 0;
    });
    for (let index = 0; index < size; index++) {
      if (skip?.(index)) continue;
      const cell = bodyStart + index * this.entryBytes;
      if (!resp && count > 0) out[at++] = NEWLINE;
      // A RESP item's length is known once it is written. When every item with this many index
      // digits has a length of the same number of digits, the `$length` header has a known width
      // and the item is written in place; otherwise it goes after room for the longest header and
      // is moved left over the unused part (one native memmove).
      const indexDigits = decimalDigits(index);
      const lengthDigits = resp ? lengthWidths[indexDigits] : 0;
      const itemStart = resp ? at + (lengthDigits ? lengthDigits + 3 : RESP_HEADER_ROOM) : at;
      out.set(head, itemStart);
      let end = itemStart + head.length;
      end = writeDecimal(out, end, index);
      out[end++] = COMMA;
      end = this.writeBody(entries, cell, out, end);
      if (resp) {
        const length = end - itemStart;
        const placed = at + 3 + decimalDigits(length);
        if (placed !== itemStart) out.copyWithin(placed, itemStart, end);
        out[at++] = DOLLAR;
        at = writeDecimal(out, at, length);
        out[at++] = CR;
        out[at++] = NEWLINE;
        at += length;
        out[at++] = CR;
        out[at++] = NEWLINE;
      } else at = end;
      count++;
    }
    if (rpush === undefined) return { bytes: out.subarray(0, at), count };
    const header = ascii(`*${count + 2}\r\n$5\r\nRPUSH\r\n$${Buffer.byteLength(rpush)}\r\n${rpush}\r\n`);
    header.copy(out, headerRoom - header.length);
    return { bytes: out.subarray(headerRoom - header.length, at), count };
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

function decimalDigits(value: number): number {
  let digits = 1;
  for (let rest = value; rest >= 10; rest = Math.floor(rest / 10)) digits++;
  return digits;
}

/** Writes a non-negative integer in decimal ASCII without building a string. */
function writeDecimal(out: Buffer, at: number, value: number): number {
  const digits = decimalDigits(value);
  let rest = value;
  for (let position = at + digits - 1; position >= at; position--) {
    out[position] = 0x30 + (rest % 10);
    rest = Math.floor(rest / 10);
  }
  return at + digits;
}
