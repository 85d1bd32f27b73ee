import { createHash } from "node:crypto";
import { encodeQueuedOutcome, type Outcome } from "../outcome.js";
import type { OutcomeDrawer } from "./draw.js";
import { EntryCodec, type QueueItemWriter } from "./entries.js";

const NEWLINE = 0x0a;

/**
 * A block before it is stored: its entries in the stored binary form (entries.ts) and the SHA-256
 * commitment of exactly those bytes. The commitment is recorded when the block is sealed, before
 * any outcome of it is served, so the block can be audited against it later.
 */
export interface BlockDraft {
  size: number;
  entries: Buffer;
  commitment: string;
}

/** Draws the outcomes of the given tiers (drawn independently, or cut from a finite_pool cycle). */
export function draftBlock(drawer: OutcomeDrawer, tiers: Uint8Array): BlockDraft {
  const size = tiers.length;
  const header = drawer.codec.headerFor(size);
  const entryBytes = drawer.codec.entryBytes;
  const entries = Buffer.allocUnsafe(header.length + size * entryBytes);
  header.copy(entries, 0);
  for (let index = 0, at = header.length; index < size; index++, at += entryBytes) {
    drawer.writeEntry(tiers[index] as number, entries, at);
  }
  return { size, entries, commitment: commitmentOf(entries) };
}

export function commitmentOf(entries: string | Uint8Array): string {
  return createHash("sha256").update(entries).digest("hex");
}

/**
 * Stored entries are binary (`KSB1`, entries.ts). Blocks sealed before that format hold canonical
 * JSON text (`[{"t":…,"m":…,"r":…},…]`, converted byte for byte to bytea by the migration); they
 * are still decoded, verified and rebuilt, recognised by their first byte `[`.
 */
function isLegacyJson(entries: Uint8Array | string): boolean {
  return typeof entries === "string" || entries[0] === 0x5b;
}

function legacyText(entries: Uint8Array | string): string {
  return typeof entries === "string" ? entries : Buffer.from(entries).toString("latin1");
}

/** The queue items of stored entries (see `QueueItemWriter`). */
export function blockQueueItemWriter(entries: Uint8Array | string, blockId: number): QueueItemWriter {
  if (isLegacyJson(entries)) return legacyItemWriter(entries, blockId);
  const { codec, size, bodyStart } = EntryCodec.read(entries as Uint8Array);
  return codec.queueItemWriter(entries as Uint8Array, bodyStart, size, blockId);
}

/** Legacy blocks are only ever reloaded by a recovery: their items are encoded up front, one string each. */
function legacyItemWriter(entries: Uint8Array | string, blockId: number): QueueItemWriter {
  const items = decodeBlockEntries(entries).map((outcome, index) =>
    Buffer.from(encodeQueuedOutcome({ ...outcome, blockId, index })),
  );
  let min = items[0]?.length ?? 0;
  let max = 0;
  for (const item of items) {
    min = Math.min(min, item.length);
    max = Math.max(max, item.length);
  }
  return {
    size: items.length,
    maxItemBytes: max,
    itemBytes: () => ({ min, max }),
    write: (index, out, at) => at + (items[index] as Buffer).copy(out, at),
  };
}

/**
 * A sealed block's Redis list items, in serving order, joined by newlines: exactly
 * `encodeQueuedOutcome` of each entry. `skip(index)` leaves out outcomes already used by a spin.
 */
export function blockQueueItems(
  entries: Uint8Array | string,
  blockId: number,
  skip?: (index: number) => boolean,
): Buffer {
  const items = blockQueueItemWriter(entries, blockId);
  const out = Buffer.allocUnsafe(items.size * (items.maxItemBytes + 1));
  let at = 0;
  for (let index = 0; index < items.size; index++) {
    if (skip?.(index)) continue;
    if (at > 0) out[at++] = NEWLINE;
    at = items.write(index, out, at);
  }
  return out.subarray(0, at);
}

/** The queue items of a draft (`blockQueueItems` of its entries). */
export function queuedItemsText(draft: BlockDraft, blockId: number): Buffer {
  return blockQueueItems(draft.entries, blockId);
}

/** The same items one string each. */
export function queuedItems(draft: BlockDraft, blockId: number): string[] {
  if (draft.size === 0) return [];
  return queuedItemsText(draft, blockId).toString("latin1").split("\n");
}

/** Decodes stored entries into outcomes (audits, tests). */
export function decodeBlockEntries(entries: Uint8Array | string): Outcome[] {
  if (isLegacyJson(entries)) {
    const raw = JSON.parse(legacyText(entries)) as { t: string; m: number; r: string[][] }[];
    return raw.map((entry) => ({ tier: entry.t, multiplierMillionths: entry.m, reelSymbols: entry.r }));
  }
  const { codec, size, bodyStart } = EntryCodec.read(entries as Uint8Array);
  return codec.decode(entries as Uint8Array, bodyStart, size);
}

/**
 * True when the stored entries hash to the recorded commitment and are in canonical form (a
 * well-formed KSB1 block with every index in range, or, for legacy blocks, canonical JSON).
 */
export function verifyBlock(entries: Uint8Array | string, commitment: string): boolean {
  if (commitmentOf(entries) !== commitment) return false;
  try {
    if (isLegacyJson(entries)) {
      const text = legacyText(entries);
      const canonical = decodeBlockEntries(text).map((entry) => ({
        t: entry.tier,
        m: entry.multiplierMillionths,
        r: entry.reelSymbols,
      }));
      return JSON.stringify(canonical) === text;
    }
    const { codec, bodyStart } = EntryCodec.read(entries as Uint8Array);
    return codec.indexesInRange(entries as Uint8Array, bodyStart);
  } catch {
    return false;
  }
}
