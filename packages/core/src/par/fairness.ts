import {
  auditPath,
  HASH_BYTES,
  type LeafLayout,
  merkleLevels,
  nodeCryptoSha256Batch,
  outcomeText,
  type RevealedEntry as PublishedEntry,
  SALT_BYTES,
  type SpinProof,
  saltsAt,
} from "@outcomes/sdk";
import { formatScaledDecimal, microsToUsd } from "../money.js";
import { EntryCodec } from "./entries.js";

/**
 * What a sealed block keeps of its Merkle tree (`blocks.merkle_levels`): every level from nodes of
 * 16 leaves (level 4) up to the root, concatenated, ~2 × size / 16 × 32 bytes (40 kB for 10,000
 * entries). A spin's proof then hashes only the 16 leaves of its group and reads the rest of its
 * path, so no request builds a tree. Blocks of at most 16 entries keep just their root.
 */
export const STORED_FROM_LEVEL = 4;

/** Where each stored level of a block of `size` entries lies in `merkle_levels`, and the level the first is. */
function storedLevelLayout(size: number): { from: number; levels: { count: number; offset: number }[]; bytes: number } {
  const counts = [size];
  while ((counts.at(-1) as number) > 1) counts.push(Math.ceil((counts.at(-1) as number) / 2));
  const from = Math.min(STORED_FROM_LEVEL, counts.length - 1);
  let bytes = 0;
  const levels = counts.slice(from).map((count) => {
    const level = { count, offset: bytes };
    bytes += count * HASH_BYTES;
    return level;
  });
  return { from, levels, bytes };
}

/**
 * What the proof of entry `index` of a block of `size` entries reads, and nothing more: the entries
 * of its group (`first`, `count`), and nodes of the stored levels (byte offsets in `merkle_levels`):
 * the group's own node, the path from it to the root (a sibling per level that has one), then the
 * root. A few hundred bytes in any block, so a proof costs the same in a block of a million entries.
 */
export function proofReads(size: number, index: number): { first: number; count: number; nodeOffsets: number[] } {
  if (!Number.isInteger(index) || index < 0 || index >= size) throw new RangeError(`no entry ${index} in the block`);
  const { from, levels } = storedLevelLayout(size);
  const group = Math.floor(index / 2 ** from);
  const first = group * 2 ** from;
  const nodeOffsets = [(levels[0] as { offset: number }).offset + group * HASH_BYTES];
  let node = group;
  for (const level of levels.slice(0, -1)) {
    const sibling = node ^ 1;
    if (sibling < level.count) nodeOffsets.push(level.offset + sibling * HASH_BYTES);
    node >>= 1;
  }
  nodeOffsets.push((levels.at(-1) as { offset: number }).offset);
  return { first, count: Math.min(2 ** from, size - first), nodeOffsets };
}

/** The leaves' view of stored entries: the ids and texts their indexes stand for. */
export function leafLayoutOf(codec: EntryCodec): LeafLayout {
  const { reels, rows, symbols, tiers } = codec.layout;
  return {
    reels,
    rows,
    symbols,
    tiers: tiers.map((tier) => ({ name: tier.name, multiplier: formatScaledDecimal(tier.multiplierMillionths) })),
  };
}

/** A sealed block as its proofs and reveal need it (the seed stays on the server until revealed). */
export interface CommittedBlock {
  blockId: number;
  entries: Uint8Array;
  /** The block's seed (independent) or its cycle's (finite_pool). */
  seed: Buffer;
  /** The block's offset in its finite_pool cycle; 0 for independent blocks. */
  position: number;
  merkleLevels: Buffer;
}

/** A spin's proof (the SDK's `SpinProof`) without the spin's own fields. */
export type EntryProof = Omit<SpinProof, "spinId" | "blockId" | "index">;

/** What `proofReads` names, read from a block: the proof of an entry needs nothing else. */
export interface ProofPieces {
  blockId: number;
  index: number;
  size: number;
  codec: EntryCodec;
  /** The stored bytes of the group's entries (`proofReads`' `first` and `count`). */
  group: Uint8Array;
  /** The stored nodes at `proofReads`' `nodeOffsets`, 32 bytes each, in that order. */
  nodes: readonly Uint8Array[];
  /** The block's seed (independent) or its cycle's (finite_pool). */
  seed: Buffer;
  /** The block's offset in its finite_pool cycle; 0 for independent blocks. */
  position: number;
}

/**
 * The RFC 9162 inclusion proof of an entry from what `proofReads` names: its group's 16 leaves
 * hashed (and checked against the stored node of the group), the rest of the path read.
 */
export function entryProofOf(pieces: ProofPieces): EntryProof {
  const { blockId, index, codec, group, nodes } = pieces;
  const { first, count, nodeOffsets } = proofReads(pieces.size, index);
  if (group.length !== count * codec.entryBytes || nodes.length !== nodeOffsets.length) {
    throw new Error(`block ${blockId}: the pieces read are not the ones the proof of entry ${index} needs`);
  }
  const salts = saltsAt(pieces.seed, pieces.position + first, count);
  // Sixteen leaves, from their texts as the contract words them (`entryLeafHashes`, built for a
  // block's thousands, would first lay out every column of the sheet).
  const texts = codec.decode(group, 0, count).map((outcome, at) =>
    outcomeText({
      blockId,
      index: first + at,
      prizeTier: outcome.tier,
      multiplier: microsToUsd(outcome.multiplierMillionths),
      reelSymbols: outcome.reelSymbols,
    }),
  );
  const saltOf = (at: number) => salts.subarray(at * SALT_BYTES, (at + 1) * SALT_BYTES);
  const groupLevels = merkleLevels(leafHashesOf(texts, salts));
  if (!Buffer.from(nodes[0] as Uint8Array).equals(groupLevels.at(-1) as Buffer)) {
    throw new Error(`block ${blockId}: its stored Merkle levels do not match its entries`);
  }
  const hex = (node: Uint8Array) => Buffer.from(node).toString("hex");
  return {
    outcomeText: texts[index - first] as string,
    salt: hex(saltOf(index - first)),
    leaf: (groupLevels[0] as Buffer).toString("hex", (index - first) * HASH_BYTES, (index - first + 1) * HASH_BYTES),
    auditPath: [...auditPath(groupLevels, index - first).map(hex), ...nodes.slice(1, -1).map(hex)],
    merkleRoot: hex(nodes.at(-1) as Uint8Array),
    treeSize: pieces.size,
  };
}

/** SHA-256(0x00 ‖ salt ‖ UTF-8(text)) of a few leaves (salts in order, 16 bytes each), in one batch. */
function leafHashesOf(texts: readonly string[], salts: Buffer): Buffer {
  const encoded = texts.map((text) => Buffer.from(text, "utf8"));
  const input = Buffer.allocUnsafe(encoded.reduce((bytes, text) => bytes + 1 + SALT_BYTES + text.length, 0));
  const bounds = new Uint32Array(2 * encoded.length);
  let at = 0;
  encoded.forEach((text, leaf) => {
    bounds[2 * leaf] = at;
    input[at++] = 0;
    at += salts.copy(input, at, leaf * SALT_BYTES, (leaf + 1) * SALT_BYTES);
    at += text.copy(input, at);
    bounds[2 * leaf + 1] = at;
  });
  const out = Buffer.allocUnsafe(encoded.length * HASH_BYTES);
  nodeCryptoSha256Batch.hashMany(input, bounds, out);
  return out;
}

/** The proof of entry `index` of a whole stored block (`entryProofOf` over the pieces it reads). */
export function entryProof(block: CommittedBlock, index: number): EntryProof {
  const { codec, size, bodyStart } = EntryCodec.read(block.entries);
  const { first, count, nodeOffsets } = proofReads(size, index);
  const { bytes } = storedLevelLayout(size);
  if (block.merkleLevels.length !== bytes) {
    throw new Error(`stored Merkle levels hold ${block.merkleLevels.length} bytes, not ${bytes}`);
  }
  const at = bodyStart + first * codec.entryBytes;
  return entryProofOf({
    blockId: block.blockId,
    index,
    size,
    codec,
    group: block.entries.subarray(at, at + count * codec.entryBytes),
    nodes: nodeOffsets.map((offset) => block.merkleLevels.subarray(offset, offset + HASH_BYTES)),
    seed: block.seed,
    position: block.position,
  });
}

/** A revealed entry (the SDK's) before the spin that used it (and its void) is joined. */
export type RevealedEntry = Omit<PublishedEntry, "spinId" | "voided">;

/** Some consecutive entries of a revealed block, as stored: just their bytes, with the block's codec and seed. */
export interface StoredEntryRange {
  codec: EntryCodec;
  /** The stored bytes of entries `first`, `first + 1`, …: a whole number of entries. */
  body: Uint8Array;
  first: number;
  /** The block's seed (independent) or its cycle's (finite_pool). */
  seed: Buffer;
  /** The block's offset in its finite_pool cycle; 0 for independent blocks. */
  position: number;
}

/**
 * The entries of a range with their salts, in index order (spins are joined by the caller). Only
 * the range is decoded, and only its salts are computed: the salts' keystream is AES-CTR, so the
 * salt of any entry is one AES block at its own counter, without the ones before it.
 */
export function revealedEntriesOf(range: StoredEntryRange): RevealedEntry[] {
  const { codec, body, first } = range;
  const count = body.length / codec.entryBytes;
  if (!Number.isInteger(count)) throw new Error("a range of stored entries holds a whole number of entries");
  const salts = saltsAt(range.seed, range.position + first, count);
  return codec.decode(body, 0, count).map((outcome, at) => ({
    index: first + at,
    prizeTier: outcome.tier,
    multiplier: microsToUsd(outcome.multiplierMillionths),
    reelSymbols: outcome.reelSymbols,
    salt: salts.toString("hex", at * SALT_BYTES, (at + 1) * SALT_BYTES),
  }));
}
