import { hash } from "node:crypto";

/**
 * RFC 9162 (§2.1) Merkle tree hash over leaf hashes: an inner node is SHA-256(0x01 ‖ left ‖ right),
 * a tree of n > 1 leaves splits at the largest power of two below n. Built bottom-up here: level
 * h + 1 hashes the pairs of level h and promotes a last node without a pair unchanged, which yields
 * the same nodes as the recursive definition (every node covers an aligned power-of-two range, or
 * the tail of the tree).
 */
export const HASH_BYTES = 32;
/** The hash of the empty tree: SHA-256 of nothing. */
export const EMPTY_TREE_HASH = hash("sha256", "", "hex");

/**
 * SHA-256 of `input` written into `out` at `at`. Many small hashes are bound by the cost of the call,
 * not by SHA-256 itself, so this takes the cheapest path measured on Node 20: a one-shot `hash`
 * answering a `binary` (latin1) string, one byte per character, copied into place by hand (a Buffer answer
 * costs an allocation, and `write` another native call).
 */
export function sha256Into(input: Uint8Array, out: Uint8Array, at: number): void {
  const digest = hash("sha256", input, "binary");
  for (let byte = 0; byte < HASH_BYTES; byte++) out[at + byte] = digest.charCodeAt(byte);
}

/**
 * Many SHA-256 digests per call: how leaves and trees are hashed. `nodeCryptoSha256Batch` (below)
 * makes one node:crypto call per digest; the service's blocks worker passes a native one
 * (`@outcomes/sha256-batch`) that hashes the whole batch in one call, the same digests for a third
 * of the CPU.
 */
export interface Sha256Batch {
  /** Message k is `input[bounds[2k] .. bounds[2k + 1])`; its digest goes to `out[32k .. 32k + 32)`. */
  hashMany(input: Uint8Array, bounds: Uint32Array, out: Uint8Array): void;
  /** The inner nodes SHA-256(0x01 ‖ left ‖ right) of the first `pairs` pairs of 32-byte nodes of `level`, into `out`. */
  hashPairs(level: Uint8Array, pairs: number, out: Uint8Array): void;
}

export const nodeCryptoSha256Batch: Sha256Batch = {
  hashMany(input, bounds, out) {
    for (let message = 0; message < bounds.length >> 1; message++) {
      sha256Into(input.subarray(bounds[2 * message], bounds[2 * message + 1]), out, message * HASH_BYTES);
    }
  },
  hashPairs(level, pairs, out) {
    // The input `0x01 ‖ left ‖ right` from byte 3 on: the children start on a 4-byte boundary and are
    // copied as sixteen 32-bit words (cheaper than a native copy, or 64 byte copies, per node).
    const scratch = new ArrayBuffer(4 + 2 * HASH_BYTES);
    const scratchWords = new Int32Array(scratch);
    new Uint8Array(scratch)[3] = 1;
    const input = new Uint8Array(scratch, 3, 1 + 2 * HASH_BYTES);
    const words =
      level.byteOffset % 4 === 0
        ? new Int32Array(level.buffer, level.byteOffset, (pairs * 2 * HASH_BYTES) >> 2)
        : new Int32Array(new Uint8Array(level.subarray(0, pairs * 2 * HASH_BYTES)).buffer);
    for (let pair = 0; pair < pairs; pair++) {
      for (let word = 0, from = pair * 16; word < 16; word++) scratchWords[1 + word] = words[from + word] as number;
      sha256Into(input, out, pair * HASH_BYTES);
    }
  },
};

/** Every level of the tree, leaves (n × 32 bytes) first, the root (32 bytes) last. */
export function merkleLevels(leaves: Buffer, batch: Sha256Batch = nodeCryptoSha256Batch): Buffer[] {
  const levels = [leaves];
  // Every level above the leaves in one allocation.
  let nodesAbove = 0;
  for (let nodes = leaves.length / HASH_BYTES; nodes > 1; nodes = Math.ceil(nodes / 2))
    nodesAbove += Math.ceil(nodes / 2);
  const above = Buffer.allocUnsafe(nodesAbove * HASH_BYTES);
  let free = 0;
  let level = leaves;
  while (level.length > HASH_BYTES) {
    const nodes = level.length / HASH_BYTES;
    const pairs = nodes >> 1;
    const next = above.subarray(free, free + Math.ceil(nodes / 2) * HASH_BYTES);
    free += next.length;
    batch.hashPairs(level, pairs, next);
    if (nodes % 2 === 1) level.copy(next, pairs * HASH_BYTES, 2 * pairs * HASH_BYTES);
    levels.push(next);
    level = next;
  }
  return levels;
}

/** The root of a tree given its leaf hashes (n × 32 bytes), lowercase hex. */
export function merkleRoot(leaves: Buffer, batch?: Sha256Batch): string {
  if (leaves.length === 0) return EMPTY_TREE_HASH;
  return (merkleLevels(leaves, batch).at(-1) as Buffer).toString("hex");
}

/**
 * The inclusion proof of node `index` of `levels[0]` up to the top of `levels` (RFC 9162 §2.1.3.1,
 * leaf to root): at each level the node's sibling, when it has one.
 */
export function auditPath(levels: readonly Buffer[], index: number): Buffer[] {
  const path: Buffer[] = [];
  let node = index;
  for (const level of levels.slice(0, -1)) {
    const sibling = node ^ 1;
    if (sibling * HASH_BYTES < level.length) {
      path.push(level.subarray(sibling * HASH_BYTES, (sibling + 1) * HASH_BYTES));
    }
    node >>= 1;
  }
  return path;
}

const nodeHash = (left: Buffer, right: Buffer) => hash("sha256", Buffer.concat([Buffer.of(1), left, right]), "buffer");

/**
 * RFC 9162 §2.1.3.2: true when `auditPath` (hex, leaf to root) proves that `leaf` is leaf `index`
 * of the tree of `treeSize` leaves whose root is `root`.
 */
export function verifyInclusion(input: {
  leaf: string;
  index: number;
  treeSize: number;
  auditPath: readonly string[];
  root: string;
}): boolean {
  const hexHash = /^[0-9a-f]{64}$/;
  if (!hexHash.test(input.leaf) || !hexHash.test(input.root) || !input.auditPath.every((p) => hexHash.test(p))) {
    return false;
  }
  if (!Number.isSafeInteger(input.index) || !Number.isSafeInteger(input.treeSize)) return false;
  if (input.index < 0 || input.index >= input.treeSize) return false;
  let fn = input.index;
  let sn = input.treeSize - 1;
  let r = Buffer.from(input.leaf, "hex");
  for (const hex of input.auditPath) {
    const p = Buffer.from(hex, "hex");
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      r = nodeHash(p, r);
      while (fn % 2 === 0 && fn !== 0) {
        fn = Math.floor(fn / 2);
        sn = Math.floor(sn / 2);
      }
    } else {
      r = nodeHash(r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && r.toString("hex") === input.root;
}
