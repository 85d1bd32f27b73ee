import { createHash, randomBytes } from "node:crypto";
import {
  type BlockTree,
  type BlockTreeInput,
  blockTree,
  drawTiers,
  SEED_BYTES,
  seedHashOf,
  writeEntries,
} from "@outcomes/sdk";
import { encodeQueuedOutcome, type Outcome, type QueueItem } from "../outcome.js";
import type { OutcomeDrawer } from "./draw.js";
import { EntryCodec, type QueueItemWriter } from "./entries.js";
import { leafLayoutOf, STORED_FROM_LEVEL } from "./fairness.js";

const NEWLINE = 0x0a;

/**
 * A block's entries in the stored binary form (entries.ts), drawn from `seed` (docs/fairness.md):
 * an independent block's own seed, or its finite_pool cycle's with `position` the block's offset
 * in the cycle.
 */
export interface DrawnBlock {
  size: number;
  entries: Buffer;
  seed: Buffer;
  position: number;
}

/**
 * A block ready to seal: its entries and the commitments recorded with them before any entry is
 * served: the SHA-256 of the stored bytes (`commitment`), SHA-256 of the seed (`seedHash`) and the
 * RFC 9162 Merkle root of its salted leaves (`merkleRoot`), with the tree's upper levels
 * (`merkleLevels`, fairness.ts) so a spin's proof needs no tree built.
 */
export interface BlockDraft extends DrawnBlock {
  blockId: number;
  commitment: string;
  seedHash: string;
  merkleRoot: string;
  merkleLevels: Buffer;
}

/** The entries of the given tiers (drawn from the seed, or cut from its finite_pool cycle). */
export function drawBlock(drawer: OutcomeDrawer, seed: Buffer, tiers: Uint8Array, position: number): DrawnBlock {
  const size = tiers.length;
  const header = drawer.codec.headerFor(size);
  const entries = Buffer.allocUnsafe(header.length + size * drawer.codec.entryBytes);
  header.copy(entries, 0);
  writeEntries(drawer.sheet, seed, position, tiers, entries, header.length);
  return { size, entries, seed, position };
}

/** A block's (independent) or a cycle's (finite_pool) seed: 32 bytes from the OS CSPRNG, nothing else. */
export function newSeed(): Buffer {
  return randomBytes(SEED_BYTES);
}

/** An independent block: a fresh seed, and every tier drawn from it. */
export function drawIndependentBlock(drawer: OutcomeDrawer, size: number): DrawnBlock {
  const seed = newSeed();
  return drawBlock(drawer, seed, drawTiers(drawer.sheet, seed, size), 0);
}

/** What the Merkle tree of a drawn block is built from, once its id (part of every leaf) is known. */
export function treeInputOf(drawer: OutcomeDrawer, drawn: DrawnBlock, blockId: number): BlockTreeInput {
  return {
    layout: leafLayoutOf(drawer.codec),
    blockId,
    entries: drawn.entries,
    at: drawn.entries.length - drawn.size * drawer.codec.entryBytes,
    size: drawn.size,
    seed: drawn.seed,
    position: drawn.position,
  };
}

/** A drawn block with its commitments, given its tree (built by `blockTree` from `treeInputOf`). */
export function draftWithTree(drawn: DrawnBlock, blockId: number, tree: BlockTree): BlockDraft {
  return {
    ...drawn,
    blockId,
    commitment: commitmentOf(drawn.entries),
    seedHash: seedHashOf(drawn.seed),
    merkleRoot: tree.merkleRoot,
    merkleLevels: Buffer.from(tree.levels.buffer, tree.levels.byteOffset, tree.levels.byteLength),
  };
}

/** The commitments of a drawn block, its tree built on this thread. */
export function draftBlock(drawer: OutcomeDrawer, drawn: DrawnBlock, blockId: number): BlockDraft {
  return draftWithTree(drawn, blockId, blockTree(treeInputOf(drawer, drawn, blockId), STORED_FROM_LEVEL));
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
 * A sealed block's Redis list items, in serving order, joined by newlines: the compact item of each
 * entry (`encodeCompactItem`; legacy JSON blocks: `encodeQueuedOutcome`). `skip(index)` leaves out
 * outcomes already used by a spin.
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
export function queuedItemsText(draft: Pick<BlockDraft, "entries" | "blockId">): Buffer {
  return blockQueueItems(draft.entries, draft.blockId);
}

/** The same items one string each. */
export function queuedItems(draft: Pick<BlockDraft, "entries" | "blockId" | "size">): string[] {
  if (draft.size === 0) return [];
  return queuedItemsText(draft).toString("latin1").split("\n");
}

/**
 * The codec of a block from the head of its stored entries (at least its header): null for a legacy
 * JSON block, whose queue items carry their outcomes.
 */
export function codecOfBlockHead(head: Uint8Array): EntryCodec | null {
  return isLegacyJson(head) ? null : EntryCodec.readHeader(head).codec;
}

/** The outcome of a queue item: its own (JSON form), or its entry read with its block's codec (compact form). */
export function queueItemOutcome(item: QueueItem, codec: EntryCodec | null): Outcome {
  if ("outcome" in item) return item.outcome;
  if (!codec) throw new Error(`block ${item.blockId} has no binary entries to read a compact item with`);
  return codec.decodeEntry(item.entry);
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
