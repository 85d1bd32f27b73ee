import { createHash } from "node:crypto";
import { encodeQueuedOutcome, type Outcome } from "../outcome.js";
import type { OutcomeDrawer } from "./draw.js";
import { EntryCodec, type ItemScratch } from "./entries.js";

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

/**
 * A sealed block's Redis list items, in serving order, joined by newlines: exactly
 * `encodeQueuedOutcome` of each entry. `skip(index)` leaves out outcomes already used by a spin.
 */
export function blockQueueItems(
  entries: Uint8Array | string,
  blockId: number,
  skip?: (index: number) => boolean,
): Buffer {
  return queueItemsOf(entries, blockId, { skip }).bytes;
}

/** A complete `RPUSH list item…` in RESP, and how many items it pushes. */
export interface RpushCommand {
  wire: Buffer;
  count: number;
}

/**
 * The same items as one `RPUSH list item…` command on the wire (what the blocks worker sends to
 * Redis), built with the items; `skip` as above. With `scratch` the command is written into the
 * caller's buffer (see `ItemScratch`).
 */
export function blockRpush(
  entries: Uint8Array | string,
  blockId: number,
  list: string,
  options: { skip?: (index: number) => boolean; scratch?: ItemScratch } = {},
): RpushCommand {
  const { bytes, count } = queueItemsOf(entries, blockId, { ...options, rpush: list });
  return { wire: bytes, count };
}

/** `RPUSH list item…` of item strings. */
export function rpushOf(list: string, items: readonly string[]): RpushCommand {
  const parts = [`*${items.length + 2}\r\n$5\r\nRPUSH\r\n$${Buffer.byteLength(list)}\r\n${list}\r\n`];
  for (const item of items) parts.push(`$${Buffer.byteLength(item)}\r\n${item}\r\n`);
  return { wire: Buffer.from(parts.join("")), count: items.length };
}

function queueItemsOf(
  entries: Uint8Array | string,
  blockId: number,
  options: { skip?: (index: number) => boolean; rpush?: string; scratch?: ItemScratch },
): { bytes: Buffer; count: number } {
  if (isLegacyJson(entries)) {
    const items = decodeBlockEntries(entries).flatMap((outcome, index) =>
      options.skip?.(index) ? [] : [encodeQueuedOutcome({ ...outcome, blockId, index })],
    );
    if (options.rpush !== undefined) {
      const { wire, count } = rpushOf(options.rpush, items);
      return { bytes: wire, count };
    }
    return { bytes: Buffer.from(items.join("\n")), count: items.length };
  }
  const { codec, size, bodyStart } = EntryCodec.read(entries as Uint8Array);
  return codec.queueItems(entries as Uint8Array, bodyStart, size, blockId, options);
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
