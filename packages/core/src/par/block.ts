import { createHash } from "node:crypto";
import type { Outcome } from "../outcome.js";
import { ByteWriter, type OutcomeDrawer } from "./draw.js";

const OPEN_ARRAY = 0x5b; // [
const CLOSE_ARRAY = 0x5d; // ]
const OPEN_ENTRY = 0x7b; // {
const COMMA = 0x2c;

/**
 * A block before it is stored: its entries as canonical text (a JSON array of `{t, m, r}`, exactly
 * what `JSON.stringify` gives; ASCII) and the SHA-256 commitment of that text. The commitment is
 * recorded when the block is sealed, before any outcome of it is served, so the block can be
 * audited against it later.
 */
export interface BlockDraft {
  size: number;
  entries: Buffer;
  /** Entry i's JSON without its opening brace is `entries[bodyStart[i] .. bodyEnd[i])`. */
  bodyStart: Uint32Array;
  bodyEnd: Uint32Array;
  commitment: string;
}

/** Draws the outcomes of the given tiers (drawn independently, or cut from a finite_pool cycle). */
export function draftBlock(drawer: OutcomeDrawer, tiers: Uint8Array): BlockDraft {
  const size = tiers.length;
  const out = new ByteWriter(2 + size * (drawer.maxBodyBytes + 2));
  const bodyStart = new Uint32Array(size);
  const bodyEnd = new Uint32Array(size);
  out.byte(OPEN_ARRAY);
  for (let index = 0; index < size; index++) {
    if (index > 0) out.byte(COMMA);
    out.byte(OPEN_ENTRY);
    bodyStart[index] = out.length;
    drawer.writeEntryBody(tiers[index] as number, out);
    bodyEnd[index] = out.length;
  }
  out.byte(CLOSE_ARRAY);
  const entries = out.bytes.subarray(0, out.length);
  return { size, entries, bodyStart, bodyEnd, commitment: commitmentOf(entries) };
}

export function commitmentOf(entries: string | Uint8Array): string {
  return createHash("sha256").update(entries).digest("hex");
}

/** The entries as the text that is stored (and committed to). */
export function entriesTextOf(draft: BlockDraft): string {
  return draft.entries.toString("latin1");
}

/**
 * The Redis list items of a sealed block, in serving order: exactly `encodeQueuedOutcome` of each
 * entry (`{"b":…,"i":…,` + the entry's own fields), sliced from the entries bytes.
 */
export function queuedItems(draft: BlockDraft, blockId: number): string[] {
  const head = `{"b":${blockId},"i":`;
  const items = new Array<string>(draft.size);
  for (let index = 0; index < draft.size; index++) {
    items[index] = `${head}${index},${draft.entries.toString("latin1", draft.bodyStart[index], draft.bodyEnd[index])}`;
  }
  return items;
}

/** Separates queue items in `queuedItemsText`: JSON text never holds a raw newline. */
export const QUEUE_ITEM_SEPARATOR = 0x0a;

/**
 * The same items as `queuedItems`, as one buffer separated by newlines, built by copying slices of
 * the entries bytes (no string per item): what the blocks worker sends to Redis in one command.
 */
export function queuedItemsText(draft: BlockDraft, blockId: number): Buffer {
  const head = Buffer.from(`{"b":${blockId},"i":`, "latin1");
  // Per item at most: the head, 10 digits of index, a comma and a separator.
  const out = Buffer.allocUnsafe(draft.entries.length + draft.size * (head.length + 12));
  let at = 0;
  for (let index = 0; index < draft.size; index++) {
    if (index > 0) out[at++] = QUEUE_ITEM_SEPARATOR;
    at += head.copy(out, at);
    at += out.write(String(index), at, "latin1");
    out[at++] = COMMA;
    at += draft.entries.copy(out, at, draft.bodyStart[index], draft.bodyEnd[index]);
  }
  return out.subarray(0, at);
}

/** Parses stored entries text back into outcomes (audits and queue rebuilds). */
export function decodeBlockEntries(entriesText: string): Outcome[] {
  const raw = JSON.parse(entriesText) as { t: string; m: number; r: string[][] }[];
  return raw.map((entry) => ({ tier: entry.t, multiplierMillionths: entry.m, reelSymbols: entry.r }));
}

/** True when the text is canonical and its SHA-256 is the recorded commitment. */
export function verifyBlock(entriesText: string, commitment: string): boolean {
  if (commitmentOf(entriesText) !== commitment) return false;
  const entries = decodeBlockEntries(entriesText).map((entry) => ({
    t: entry.tier,
    m: entry.multiplierMillionths,
    r: entry.reelSymbols,
  }));
  return JSON.stringify(entries) === entriesText;
}
