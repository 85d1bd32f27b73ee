import { createHash } from "node:crypto";
import { SALT_BYTES } from "./keystream.js";
import { HASH_BYTES, sha256Into } from "./merkle.js";
import { multiplierText } from "./sheet.js";

/**
 * Leaves (CONTRACT §10): entry `i` of block `B` is
 * `outcomeText = B|i|prizeTier|multiplier|reels`, with the multiplier's shortest exact decimal and
 * `reels` each reel's visible symbol ids top to bottom joined by `,`, reels joined by `/`;
 * `leaf = SHA-256(0x00 ‖ salt_i ‖ UTF-8(outcomeText))`.
 */
export interface LeafOutcome {
  blockId: number | string;
  index: number;
  prizeTier: string;
  multiplier: number;
  reelSymbols: readonly (readonly string[])[];
}

export function outcomeText(outcome: LeafOutcome): string {
  const reels = outcome.reelSymbols.map((reel) => reel.join(",")).join("/");
  return `${outcome.blockId}|${outcome.index}|${outcome.prizeTier}|${multiplierText(outcome.multiplier)}|${reels}`;
}

/** The leaf hash of an entry, lowercase hex. */
export function leafHash(salt: string | Uint8Array, text: string): string {
  const saltBytes = typeof salt === "string" ? Buffer.from(salt, "hex") : salt;
  return createHash("sha256").update(Buffer.of(0)).update(saltBytes).update(text, "utf8").digest("hex");
}

/** What the leaves of stored entries need: the symbol ids and tier texts their indexes stand for. */
export interface LeafLayout {
  reels: number;
  rows: number;
  symbols: readonly string[];
  tiers: readonly { name: string; multiplier: string }[];
}

const ascii = (text: string) => new Uint8Array(Buffer.from(text, "utf8"));
const COMMA = 0x2c;
const SLASH = 0x2f;
/** A column's text is precomputed up to this many possible columns (symbols^rows). */
const COLUMN_TABLE_LIMIT = 4096;

/** Short byte strings packed into one array: piece k is `bytes[start[k] .. start[k + 1])`. */
class Pieces {
  readonly bytes: Uint8Array;
  readonly start: Int32Array;
  readonly longest: number;

  constructor(pieces: readonly Uint8Array[]) {
    this.start = new Int32Array(pieces.length + 1);
    pieces.forEach((piece, index) => {
      this.start[index + 1] = (this.start[index] as number) + piece.length;
    });
    this.bytes = new Uint8Array(this.start[pieces.length] as number);
    for (const [index, piece] of pieces.entries()) this.bytes.set(piece, this.start[index]);
    this.longest = Math.max(0, ...pieces.map((piece) => piece.length));
  }

  /** Copies piece `index` to `out` at `at` (byte by byte: cheaper than a native call for a few bytes). */
  write(index: number, out: Uint8Array, at: number): number {
    const bytes = this.bytes;
    const end = this.start[index + 1] as number;
    for (let from = this.start[index] as number; from < end; from++) out[at++] = bytes[from] as number;
    return at;
  }
}

/**
 * Where a leaf's input is built: `0x00 ‖ salt ‖ text` from byte SCRATCH_START on, so the salt starts
 * on a 4-byte boundary and is copied as four 32-bit words.
 */
const SCRATCH_START = 3;
const SALT_AT = SCRATCH_START + 1;

/**
 * The leaf hashes of `count` entries in `writeEntries`' layout (tier index, then the cells reel by
 * reel), the first of which is entry `firstIndex` of block `blockId`, with their salts (16 bytes
 * each, in order): 32 bytes per leaf, in order. The same text as `outcomeText`, written from
 * precomputed pieces into one buffer (no string per entry), which is what lets the blocks worker
 * hash 10,000 leaves in a few milliseconds: the SHA-256 calls are most of the cost.
 */
export function entryLeafHashes(
  layout: LeafLayout,
  blockId: number,
  firstIndex: number,
  entries: Uint8Array,
  at: number,
  count: number,
  salts: Uint8Array,
): Buffer {
  const { reels, rows, symbols } = layout;
  const symbolCount = symbols.length;
  const symbolPieces = new Pieces(symbols.map(ascii));
  const tierPieces = new Pieces(layout.tiers.map((tier) => ascii(`|${tier.name}|${tier.multiplier}|`)));
  const columns =
    symbolCount ** rows <= COLUMN_TABLE_LIMIT
      ? new Pieces(
          Array.from({ length: symbolCount ** rows }, (_, code) => {
            const ids: string[] = [];
            for (let row = 0, rest = code; row < rows; row++, rest = Math.floor(rest / symbolCount)) {
              ids.push(symbols[rest % symbolCount] as string);
            }
            return ascii(ids.join(","));
          }),
        )
      : null;
  const prefix = ascii(`${blockId}|`);
  const textStart = SALT_AT + SALT_BYTES + prefix.length;
  const longestText = 16 + tierPieces.longest + reels * rows * (symbolPieces.longest + 1);
  const scratchBuffer = new ArrayBuffer(textStart + longestText);
  const scratch = new Uint8Array(scratchBuffer);
  const scratchWords = new Int32Array(scratchBuffer, 0, SALT_AT / 4 + SALT_BYTES / 4);
  scratch.set(prefix, SALT_AT + SALT_BYTES);
  // Aligned salts are copied a word at a time; others (a caller's odd view) byte by byte.
  const saltWords =
    salts.byteOffset % 4 === 0 ? new Int32Array(salts.buffer, salts.byteOffset, (count * SALT_BYTES) >> 2) : null;
  // One view per input length, reused: a subarray per leaf would be an object per hash.
  const views: Uint8Array[] = [];
  const out = Buffer.allocUnsafe(count * HASH_BYTES);
  const stride = 1 + reels * rows;
  // The index's digits, counted up in place rather than divided out per leaf.
  let digitsEnd = writeDigits(scratch, textStart, firstIndex);
  for (let leaf = 0; leaf < count; leaf++, at += stride) {
    if (leaf > 0) digitsEnd = incrementDigits(scratch, textStart, digitsEnd);
    if (saltWords) {
      const from = leaf * (SALT_BYTES >> 2);
      for (let word = 0; word < SALT_BYTES >> 2; word++)
        scratchWords[(SALT_AT >> 2) + word] = saltWords[from + word] as number;
    } else {
      for (let byte = 0, from = leaf * SALT_BYTES; byte < SALT_BYTES; byte++)
        scratch[SALT_AT + byte] = salts[from + byte] as number;
    }
    let end = tierPieces.write(entries[at] as number, scratch, digitsEnd);
    let cell = at + 1;
    for (let reel = 0; reel < reels; reel++) {
      if (reel > 0) scratch[end++] = SLASH;
      if (columns) {
        let code = 0;
        for (let row = rows - 1; row >= 0; row--) code = code * symbolCount + (entries[cell + row] as number);
        end = columns.write(code, scratch, end);
      } else {
        for (let row = 0; row < rows; row++) {
          if (row > 0) scratch[end++] = COMMA;
          end = symbolPieces.write(entries[cell + row] as number, scratch, end);
        }
      }
      cell += rows;
    }
    let view = views[end];
    if (!view) {
      view = new Uint8Array(scratchBuffer, SCRATCH_START, end - SCRATCH_START);
      views[end] = view;
    }
    sha256Into(view, out, leaf * HASH_BYTES);
  }
  return out;
}

/** Writes `value` in decimal at `at`; answers where it ends. */
function writeDigits(out: Uint8Array, at: number, value: number): number {
  let digits = 1;
  for (let rest = value; rest >= 10; rest = Math.floor(rest / 10)) digits++;
  for (let position = at + digits - 1, rest = value; position >= at; position--, rest = Math.floor(rest / 10)) {
    out[position] = 0x30 + (rest % 10);
  }
  return at + digits;
}

/** Adds one to the decimal number in `out[at .. end)`; answers its new end (one further after 9…9). */
function incrementDigits(out: Uint8Array, at: number, end: number): number {
  for (let position = end - 1; position >= at; position--) {
    if (out[position] !== 0x39) {
      out[position] = (out[position] as number) + 1;
      return end;
    }
    out[position] = 0x30;
  }
  out[at] = 0x31;
  out[end] = 0x30;
  return end + 1;
}
