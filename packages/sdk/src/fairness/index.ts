// Verification (what partners call) and the derivation the service's blocks worker itself runs.
export {
  type BlockPosition,
  type DerivedEntry,
  deriveBlockEntries,
  drawTiers,
  entryBytes,
  seedBytes,
  seedHashOf,
  shuffleCycle,
  writeEntries,
} from "./derive.js";
export { SALT_BYTES, SEED_BYTES, saltsAt } from "./keystream.js";
export { entryLeafHashes, type LeafOutcome, leafHash, outcomeText } from "./leaves.js";
export {
  auditPath,
  EMPTY_TREE_HASH,
  HASH_BYTES,
  merkleLevels,
  merkleRoot,
  nodeCryptoSha256Batch,
  type Sha256Batch,
  verifyInclusion,
} from "./merkle.js";
export { CompiledSheet, type LeafLayout, multiplierText } from "./sheet.js";
export {
  type BlockTree,
  type BlockTreeInput,
  blockTree,
  blockTreeLevels,
  type TreeAnswer,
  type TreeJob,
  type TreeWorkerData,
} from "./tree.js";
export { type Verification, verifyRevealedBlock, verifySpinProof } from "./verify.js";
