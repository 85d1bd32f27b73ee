import { saltsAt } from "./keystream.js";
import { entryLeafHashes } from "./leaves.js";
import { EMPTY_TREE_HASH, HASH_BYTES, merkleLevels, type Sha256Batch } from "./merkle.js";
import type { LeafLayout } from "./sheet.js";

/** What the Merkle tree of a block needs: its entries in `writeEntries`' layout and their salts' source. */
export interface BlockTreeInput {
  layout: LeafLayout;
  blockId: number;
  /** The entries, the first at byte `at`, `size` of them. */
  entries: Uint8Array;
  at: number;
  size: number;
  /** The block's seed (independent) or its cycle's (finite_pool), and the block's offset in the cycle. */
  seed: Uint8Array;
  position: number;
}

/** A block's tree: its root (lowercase hex) and its levels from `fromLevel` up, concatenated. */
export interface BlockTree {
  merkleRoot: string;
  levels: Buffer;
}

/**
 * The RFC 9162 tree of a whole block, as the service computes it when sealing (in a worker thread,
 * `tree-worker.ts`) and as a verifier recomputes it: every level of it, leaves first.
 */
export function blockTreeLevels(input: BlockTreeInput, batch?: Sha256Batch): Buffer[] {
  const salts = saltsAt(input.seed, input.position, input.size);
  return merkleLevels(
    entryLeafHashes(input.layout, input.blockId, 0, input.entries, input.at, input.size, salts, batch),
    batch,
  );
}

/** The root and the levels from `fromLevel` (0: the leaves) up, the root's level at most. */
export function blockTree(input: BlockTreeInput, fromLevel: number, batch?: Sha256Batch): BlockTree {
  if (input.size === 0) return { merkleRoot: EMPTY_TREE_HASH, levels: Buffer.alloc(0) };
  const levels = blockTreeLevels(input, batch);
  const root = levels.at(-1) as Buffer;
  return {
    merkleRoot: root.toString("hex", 0, HASH_BYTES),
    levels: Buffer.concat(levels.slice(Math.min(fromLevel, levels.length - 1))),
  };
}

/**
 * What a tree worker (`@outcomes/sdk/tree-worker`) is started with: the path of a native
 * `Sha256Batch` module to load (`@outcomes/sha256-batch`), or null to hash with node:crypto.
 */
export interface TreeWorkerData {
  sha256BatchPath: string | null;
}

/** A message to the tree worker: build this tree. */
export interface TreeJob {
  id: number;
  input: BlockTreeInput;
  fromLevel: number;
}

/** Its answer, one per job, in order. */
export type TreeAnswer = { id: number; tree: BlockTree; error?: undefined } | { id: number; error: string };
