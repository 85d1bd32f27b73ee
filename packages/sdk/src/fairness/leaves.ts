import { createHash } from "node:crypto";
import { SALT_BYTES } from "./keystream.js";
import { HASH_BYTES, nodeCryptoSha256Batch, type Sha256Batch } from "./merkle.js";
import { type LeafLayout, multiplierText } from "./sheet.js";
import { TextPieces } from "./text-pieces.js";

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

const ascii = (text: string) => new Uint8Array(Buffer.from(text, "utf8"));
const COMMA = 0x2c;
const SLASH = 0x2f;
/** A column's text is precomputed up to this many possible columns (symbols^rows). */
const COLUMN_TABLE_LIMIT = 4096;

/**
 * The leaf hashes of `count` entries in `writeEntries`' layout (tier index, then the cells reel by
 * reel), the first of which is entry `firstIndex` of block `blockId`, with their salts (16 bytes
 * each, in order): 32 bytes per leaf, in order. The same text as `outcomeText`, written from
 * precomputed pieces into one buffer (no string per entry), every leaf's input `0x00 ‖ salt ‖ text`
 * in a slot of its own, then hashed in one `batch.hashMany`: what lets the blocks worker hash
 * 10,000 leaves in about a millisecond.
 */
export function entryLeafHashes(
  layout: LeafLayout,
  blockId: number,
  firstIndex: number,
  entries: Uint8Array,
  at: number,
  count: number,
  salts: Uint8Array,
  batch: Sha256Batch = nodeCryptoSha256Batch,
): Buffer {
  const { reels, rows, symbols } = layout;
  const symbolCount = symbols.length;
  const symbolPieces = new TextPieces(symbols.map(ascii));
  const tierPieces = new TextPieces(layout.tiers.map((tier) => ascii(`|${tier.name}|${tier.multiplier}|`)));
  const columns =
    symbolCount ** rows <= COLUMN_TABLE_LIMIT
      ? new TextPieces(
          Array.from({ length: symbolCount ** rows }, (_, code) => {
            const ids: string[] = [];
            for (let row = 0, rest = code; row < rows; row++, rest = Math.floor(rest / symbolCount)) {
              ids.push(symbols[rest % symbolCount] as string);
            }
            return ascii(ids.join(","));
          }),
        )
      : null;
  const prefix = new TextPieces([ascii(`${blockId}|`)]);
  // A leaf's slot: 3 bytes of padding, then `0x00 ‖ salt ‖ text`, so every salt starts on a 4-byte
  // boundary and is copied as four 32-bit words; slots are a multiple of 4 bytes long.
  const longestInput =
    1 + SALT_BYTES + prefix.longest + 16 + tierPieces.longest + reels * rows * (symbolPieces.longest + 1);
  // 3 more: a piece's last word may write up to 3 bytes past the input (see `TextPieces`).
  const slot = (3 + longestInput + 3 + 3) & ~3;
  const { inputs, inputView, inputWords, bounds } = leafScratch(count * slot, 2 * count);
  // Aligned salts are copied a word at a time; others (a caller's odd view) byte by byte.
  const saltWords =
    salts.byteOffset % 4 === 0 ? new Int32Array(salts.buffer, salts.byteOffset, (count * SALT_BYTES) >> 2) : null;
  // The index's digits, counted up in place rather than divided out per leaf.
  const digits = new Uint8Array(16);
  let digitsEnd = writeDigits(digits, 0, firstIndex);
  const stride = 1 + reels * rows;
  for (let leaf = 0; leaf < count; leaf++, at += stride) {
    if (leaf > 0) digitsEnd = incrementDigits(digits, 0, digitsEnd);
    const start = leaf * slot + 3;
    inputs[start] = 0;
    const saltAt = start + 1;
    if (saltWords) {
      const from = leaf * (SALT_BYTES >> 2);
      for (let word = 0; word < SALT_BYTES >> 2; word++)
        inputWords[(saltAt >> 2) + word] = saltWords[from + word] as number;
    } else {
      for (let byte = 0, from = leaf * SALT_BYTES; byte < SALT_BYTES; byte++)
        inputs[saltAt + byte] = salts[from + byte] as number;
    }
    let end = saltAt + SALT_BYTES;
    end = prefix.write(0, inputView, end);
    for (let digit = 0; digit < digitsEnd; digit++) inputs[end++] = digits[digit] as number;
    end = tierPieces.write(entries[at] as number, inputView, end);
    let cell = at + 1;
    for (let reel = 0; reel < reels; reel++) {
      if (reel > 0) inputs[end++] = SLASH;
      if (columns) {
        let code = 0;
        for (let row = rows - 1; row >= 0; row--) code = code * symbolCount + (entries[cell + row] as number);
        end = columns.write(code, inputView, end);
      } else {
        for (let row = 0; row < rows; row++) {
          if (row > 0) inputs[end++] = COMMA;
          end = symbolPieces.write(entries[cell + row] as number, inputView, end);
        }
      }
      cell += rows;
    }
    bounds[2 * leaf] = start;
    bounds[2 * leaf + 1] = end;
  }
  const out = Buffer.allocUnsafe(count * HASH_BYTES);
  batch.hashMany(inputs, bounds.subarray(0, 2 * count), out);
  return out;
}

/**
 * The leaves' inputs and bounds, kept between calls (they never leave `entryLeafHashes`, which runs
 * to its end without yielding): a tree thread builds block after block without allocating, and
 * collecting, ~1 MB per block. Larger ones (blocks of over ~100,000 entries) are not kept.
 */
const SCRATCH_KEPT_BYTES = 8 * 1024 * 1024;
type LeafScratch = { inputs: Uint8Array; inputView: DataView; inputWords: Int32Array; bounds: Uint32Array };
let kept: LeafScratch | undefined;
function leafScratch(inputBytes: number, boundCount: number): LeafScratch {
  if (kept && kept.inputs.length >= inputBytes && kept.bounds.length >= boundCount) return kept;
  const inputs = new Uint8Array(inputBytes);
  const scratch = {
    inputs,
    inputView: new DataView(inputs.buffer),
    inputWords: new Int32Array(inputs.buffer),
    bounds: new Uint32Array(boundCount),
  };
  if (inputBytes + 4 * boundCount <= SCRATCH_KEPT_BYTES) kept = scratch;
  return scratch;
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
