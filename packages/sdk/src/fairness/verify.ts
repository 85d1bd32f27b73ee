import type { Block, ParSheetDocument, RevealedEntries, SpinProof, SpinResult } from "../types.js";
import { deriveBlockEntries, seedBytes, seedHashOf } from "./derive.js";
import { saltsAt } from "./keystream.js";
import { leafHash, outcomeText } from "./leaves.js";
import { HASH_BYTES, merkleRoot, verifyInclusion } from "./merkle.js";

/** What a check found: `reason` says which part failed, in words. */
export type Verification = { ok: true; reason: null } | { ok: false; reason: string };

const passed: Verification = { ok: true, reason: null };
const failed = (reason: string): Verification => ({ ok: false, reason });
const HEX_SALT = /^[0-9a-f]{32}$/;

/**
 * Checks that a spin's outcome is the entry its proof names, committed in `block` before the spin:
 * the proof belongs to the spin, its `outcomeText` is the spin's outcome at the spin's block and
 * index, its leaf is SHA-256(0x00 ‖ salt ‖ outcomeText), its audit path leads to the block's
 * `merkleRoot` over `size` leaves, and the block was sealed before the spin. Once the block is
 * revealed, the salt must also be the one its seed derives.
 */
export function verifySpinProof(spin: SpinResult, proof: SpinProof, block: Block): Verification {
  if (!spin.fairness) return failed("the spin has no fairness reference (a forced sandbox spin comes from no block)");
  if (proof.spinId !== spin.spinId) return failed(`the proof is of spin ${proof.spinId}, not ${spin.spinId}`);
  const { blockId, index } = spin.fairness;
  if (proof.blockId !== blockId || proof.index !== index) {
    return failed(
      `the proof names entry ${proof.index} of block ${proof.blockId}; the spin was entry ${index} of block ${blockId}`,
    );
  }
  if (block.blockId !== blockId) return failed(`the block given is ${block.blockId}, the spin's is ${blockId}`);
  if (block.merkleRoot === null) return failed("the block has no merkleRoot (sealed before provable fairness)");
  if (proof.merkleRoot !== block.merkleRoot)
    return failed("the proof's merkleRoot is not the block's committed merkleRoot");
  if (proof.treeSize !== block.size)
    return failed(`the proof's treeSize ${proof.treeSize} is not the block's size ${block.size}`);
  const expected = outcomeText({
    blockId,
    index,
    prizeTier: spin.outcome.prizeTier,
    multiplier: spin.outcome.multiplier,
    reelSymbols: spin.presentation.reelSymbols,
  });
  if (proof.outcomeText !== expected) {
    return failed(`the proof's outcomeText "${proof.outcomeText}" is not the spin's outcome "${expected}"`);
  }
  if (!HEX_SALT.test(proof.salt)) return failed("the salt is not 16 bytes of lowercase hex");
  if (leafHash(proof.salt, proof.outcomeText) !== proof.leaf) {
    return failed("the leaf is not SHA-256(0x00 ‖ salt ‖ outcomeText)");
  }
  if (
    !verifyInclusion({
      leaf: proof.leaf,
      index,
      treeSize: proof.treeSize,
      auditPath: proof.auditPath,
      root: proof.merkleRoot,
    })
  ) {
    return failed("the audit path does not lead from the leaf to the block's merkleRoot");
  }
  if (Date.parse(block.sealedAt) > Date.parse(spin.createdAt)) {
    return failed(`the block was sealed at ${block.sealedAt}, after the spin at ${spin.createdAt}`);
  }
  if (block.seed !== null) {
    let salt: string;
    try {
      salt = saltsAt(seedBytes(block.seed), (block.cycle?.offset ?? 0) + index, 1).toString("hex");
    } catch {
      return failed("the block's seed is not 32 bytes of hex");
    }
    if (salt !== proof.salt) return failed("the salt is not the one the block's revealed seed derives");
  }
  return passed;
}

/**
 * Checks a revealed block against its commitments and its PAR sheet (the document as uploaded):
 * SHA-256(seed) is the `seedHash` recorded at sealing, every entry (tier, multiplier, window, salt)
 * is the one `deriveBlockEntries` re-derives from the seed, and the entries' Merkle root is the
 * block's `merkleRoot`.
 */
export function verifyRevealedBlock(block: Block, revealed: RevealedEntries, parSheet: ParSheetDocument): Verification {
  if (block.seed === null) return failed("the block is not revealed yet (its seed is null)");
  if (revealed.blockId !== block.blockId)
    return failed(`the entries are of block ${revealed.blockId}, not ${block.blockId}`);
  if (revealed.seed !== block.seed) return failed("the entries' seed is not the block's");
  let seedHash: string;
  try {
    seedHash = seedHashOf(block.seed);
  } catch {
    return failed("the seed is not 32 bytes of hex");
  }
  if (seedHash !== block.seedHash) return failed("SHA-256(seed) is not the block's committed seedHash");
  if (block.cycle && block.cycle.seedHash !== seedHash) return failed("SHA-256(seed) is not the cycle's seedHash");
  const drawMode = parSheet.drawMode ?? "independent";
  if (drawMode !== block.drawMode) return failed(`the PAR sheet draws ${drawMode}, the block is ${block.drawMode}`);
  if (revealed.entries.length !== block.size) {
    return failed(`${revealed.entries.length} entries revealed, the block has ${block.size}`);
  }
  let derived: ReturnType<typeof deriveBlockEntries>;
  try {
    derived = deriveBlockEntries(block.seed, parSheet, { size: block.size, offset: block.cycle?.offset ?? 0 });
  } catch (error) {
    return failed(`the entries cannot be derived from this PAR sheet: ${(error as Error).message}`);
  }
  for (const [position, entry] of revealed.entries.entries()) {
    const expected = derived[position] as (typeof derived)[number];
    for (const field of ["index", "prizeTier", "multiplier", "reelSymbols", "salt"] as const) {
      if (JSON.stringify(entry[field]) !== JSON.stringify(expected[field])) {
        return failed(
          `entry ${position}: ${field} ${JSON.stringify(entry[field])} is not the ${JSON.stringify(expected[field])} the seed derives`,
        );
      }
    }
  }
  const leaves = Buffer.alloc(revealed.entries.length * HASH_BYTES);
  for (const entry of revealed.entries) {
    leaves.write(
      leafHash(entry.salt, outcomeText({ blockId: block.blockId, ...entry })),
      entry.index * HASH_BYTES,
      "hex",
    );
  }
  if (merkleRoot(leaves) !== block.merkleRoot) {
    return failed("the Merkle root of the revealed entries is not the block's committed merkleRoot");
  }
  return passed;
}
