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

const ascii = (text: string) => Buffer.from(text, "utf8");
const COMMA = 0x2c;
const SLASH = 0x2f;
/** A column's text is precomputed up to this many possible columns (symbols^rows). */
const COLUMN_TABLE_LIMIT = 4096;

/**
 * The leaf hashes of `count` entries in `writeEntries`' layout (tier index, then the cells reel by
 * reel), the first of which is entry `firstIndex` of block `blockId`, with their salts (16 bytes
 * each, in order): 32 bytes per leaf, in order. The same text as `outcomeText`, written from
 * precomputed pieces into one buffer (no string per entry), which is what lets the blocks worker
 * hash 10,000 leaves in a few milliseconds.
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
  const symbolBytes = symbols.map(ascii);
  const tierBytes = layout.tiers.map((tier) => ascii(`|${tier.name}|${tier.multiplier}|`));
  const columns =
    symbols.length ** rows <= COLUMN_TABLE_LIMIT
      ? Array.from({ length: symbols.length ** rows }, (_, code) => {
          const ids: string[] = [];
          for (let row = 0, rest = code; row < rows; row++, rest = Math.floor(rest / symbols.length)) {
            ids.push(symbols[rest % symbols.length] as string);
          }
          return ascii(ids.join(","));
        })
      : null;
  const prefix = ascii(`${blockId}|`);
  const longestSymbol = Math.max(...symbolBytes.map((bytes) => bytes.length));
  const longestTier = Math.max(...tierBytes.map((bytes) => bytes.length));
  const scratch = Buffer.alloc(1 + SALT_BYTES + prefix.length + 16 + longestTier + reels * rows * (longestSymbol + 1));
  prefix.copy(scratch, 1 + SALT_BYTES);
  const textStart = 1 + SALT_BYTES + prefix.length;
  // One view per leaf length, reused: a subarray per leaf would be an object per hash.
  const views: Buffer[] = [];
  const out = Buffer.allocUnsafe(count * HASH_BYTES);
  const stride = 1 + reels * rows;
  for (let leaf = 0; leaf < count; leaf++, at += stride) {
    for (let byte = 0, from = leaf * SALT_BYTES; byte < SALT_BYTES; byte++)
      scratch[1 + byte] = salts[from + byte] as number;
    let end = writeDigits(scratch, textStart, firstIndex + leaf);
    end = copyInto(scratch, end, tierBytes[entries[at] as number] as Buffer);
    let cell = at + 1;
    for (let reel = 0; reel < reels; reel++) {
      if (reel > 0) scratch[end++] = SLASH;
      if (columns) {
        let code = 0;
        for (let row = rows - 1; row >= 0; row--) code = code * symbols.length + (entries[cell + row] as number);
        end = copyInto(scratch, end, columns[code] as Buffer);
      } else {
        for (let row = 0; row < rows; row++) {
          if (row > 0) scratch[end++] = COMMA;
          end = copyInto(scratch, end, symbolBytes[entries[cell + row] as number] as Buffer);
        }
      }
      cell += rows;
    }
    let view = views[end];
    if (!view) {
      view = scratch.subarray(0, end);
      views[end] = view;
    }
    sha256Into(view, out, leaf * HASH_BYTES);
  }
  return out;
}

/** Copies short pieces byte by byte: cheaper than a native call for a few bytes. */
function copyInto(out: Buffer, at: number, piece: Buffer): number {
  for (let index = 0; index < piece.length; index++) out[at + index] = piece[index] as number;
  return at + piece.length;
}

function writeDigits(out: Buffer, at: number, value: number): number {
  let digits = 1;
  for (let rest = value; rest >= 10; rest = Math.floor(rest / 10)) digits++;
  for (let position = at + digits - 1, rest = value; position >= at; position--, rest = Math.floor(rest / 10)) {
    out[position] = 0x30 + (rest % 10);
  }
  return at + digits;
}
