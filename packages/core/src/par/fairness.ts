import {
  auditPath,
  entryLeafHashes,
  HASH_BYTES,
  type LeafLayout,
  merkleLevels,
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

/** The stored levels of a block of `size` entries, and the level the first of them is. */
function readStoredLevels(stored: Buffer, size: number): { from: number; levels: Buffer[] } {
  const counts = [size];
  while ((counts.at(-1) as number) > 1) counts.push(Math.ceil((counts.at(-1) as number) / 2));
  const from = Math.min(STORED_FROM_LEVEL, counts.length - 1);
  const levels: Buffer[] = [];
  let at = 0;
  for (const count of counts.slice(from)) {
    levels.push(stored.subarray(at, at + count * HASH_BYTES));
    at += count * HASH_BYTES;
  }
  if (at !== stored.length) throw new Error(`stored Merkle levels hold ${stored.length} bytes, not ${at}`);
  return { from, levels };
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

/** The RFC 9162 inclusion proof of entry `index`: its group's 16 leaves hashed, the rest read. */
export function entryProof(block: CommittedBlock, index: number): EntryProof {
  const { codec, size, bodyStart } = EntryCodec.read(block.entries);
  if (!Number.isInteger(index) || index < 0 || index >= size) throw new RangeError(`no entry ${index} in the block`);
  const stored = readStoredLevels(block.merkleLevels, size);
  const group = Math.floor(index / 2 ** stored.from);
  const first = group * 2 ** stored.from;
  const count = Math.min(2 ** stored.from, size - first);
  const salts = saltsAt(block.seed, block.position + first, count);
  const groupLevels = merkleLevels(
    entryLeafHashes(
      leafLayoutOf(codec),
      block.blockId,
      first,
      block.entries,
      bodyStart + first * codec.entryBytes,
      count,
      salts,
    ),
  );
  const groupRoot = (stored.levels[0] as Buffer).subarray(group * HASH_BYTES, (group + 1) * HASH_BYTES);
  if (!groupRoot.equals(groupLevels.at(-1) as Buffer)) {
    throw new Error(`block ${block.blockId}: its stored Merkle levels do not match its entries`);
  }
  const [outcome] = codec.decode(block.entries, bodyStart + index * codec.entryBytes, 1);
  if (!outcome) throw new Error(`block ${block.blockId} has no entry ${index}`);
  const leafAt = (index - first) * HASH_BYTES;
  return {
    outcomeText: outcomeText({
      blockId: block.blockId,
      index,
      prizeTier: outcome.tier,
      multiplier: microsToUsd(outcome.multiplierMillionths),
      reelSymbols: outcome.reelSymbols,
    }),
    salt: salts.toString("hex", (index - first) * SALT_BYTES, (index - first + 1) * SALT_BYTES),
    leaf: (groupLevels[0] as Buffer).toString("hex", leafAt, leafAt + HASH_BYTES),
    auditPath: [...auditPath(groupLevels, index - first), ...auditPath(stored.levels, group)].map((node) =>
      node.toString("hex"),
    ),
    merkleRoot: (stored.levels.at(-1) as Buffer).toString("hex"),
    treeSize: size,
  };
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
