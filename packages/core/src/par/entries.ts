import type { Outcome } from "../outcome.js";
import { decimalDigits, writeDecimal } from "./decimal.js";

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
/**
 * No block's header is longer: 256 symbol ids of up to 32 characters and 256 tiers (T0..T255, their
 * multipliers up to 1,000,000 in millionths) make 13,216 bytes. A reader of a block's head reads this
 * much (`codecOfBlockHead`).
 */
export const BLOCK_HEADER_MAX_BYTES = 16_384;
const SIZE_OFFSET = 10;
const DOT = 0x2e;
const HEX_DIGITS = Buffer.from("0123456789abcdef", "latin1");
const ascii = (text: string) => Buffer.from(text, "latin1");

/**
 * A block's Redis queue items (outcome.ts, `QueueItem`), written one at a time into the caller's
 * buffer, by index in serving order. The caller separates or frames
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

  constructor(readonly layout: EntryLayout) {
    const { reels, rows } = layout;
    this.cells = reels * rows;
    this.entryBytes = 1 + this.cells;
    this.header = encodeHeader(layout);
  }

  /** Reads the header of stored entries and checks their length; throws on anything that is not a well-formed block. */
  static read(entries: Uint8Array): { codec: EntryCodec; size: number; bodyStart: number } {
    const read = EntryCodec.readHeader(entries);
    if (entries.length !== read.bodyStart + read.size * read.codec.entryBytes) {
      throw new Error("block body length does not match its size");
    }
    return read;
  }

  /**
   * Reads the header at the start of stored entries (the body may be cut off, as when only the head
   * of a block is read); throws on anything that is not a well-formed header.
   */
  static readHeader(entries: Uint8Array): { codec: EntryCodec; size: number; bodyStart: number } {
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
   * The compact queue items (outcome.ts) of the block of `size` entries at `bodyStart`: each
   * `~<blockId>.<index>.` and its entry's bytes in hex, written straight into the caller's buffer.
   */
  queueItemWriter(entries: Uint8Array, bodyStart: number, size: number, blockId: number): QueueItemWriter {
    const head = ascii(`~${blockId}.`);
    const entryBytes = this.entryBytes;
    // The head, the index, a dot, two hex digits per byte of the entry.
    const itemBytes = (indexDigits: number) => head.length + indexDigits + 1 + 2 * entryBytes;
    return {
      size,
      maxItemBytes: itemBytes(decimalDigits(Math.max(0, size - 1))),
      itemBytes: (indexDigits) => ({ min: itemBytes(indexDigits), max: itemBytes(indexDigits) }),
      write: (index, out, at) => {
        out.set(head, at);
        let end = writeDecimal(out, at + head.length, index);
        out[end++] = DOT;
        for (let cell = bodyStart + index * entryBytes, last = cell + entryBytes; cell < last; cell++) {
          const byte = entries[cell] as number;
          out[end++] = HEX_DIGITS[byte >> 4] as number;
          out[end++] = HEX_DIGITS[byte & 15] as number;
        }
        return end;
      },
    };
  }

  /** The outcome of one entry's stored bytes (a compact queue item's); throws when they are not one of this layout's. */
  decodeEntry(entry: Uint8Array): Outcome {
    if (entry.length !== this.entryBytes) throw new Error(`an entry of this block is ${this.entryBytes} bytes`);
    const entries = Buffer.from(entry.buffer, entry.byteOffset, entry.byteLength);
    if (!this.indexesInRange(entries, 0)) throw new Error("entry index out of range");
    return this.decode(entries, 0, 1)[0] as Outcome;
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
