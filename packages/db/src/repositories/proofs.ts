import { EntryCodec, type EntryProof, ErrorCode, entryProofOf, ServiceError } from "@outcomes/core";
import type { Database } from "../client.js";
import {
  type BlockRow,
  type ProvableBlockRow,
  readBlockHeader,
  readSpinProofRow,
  readVerificationRows,
} from "./fairness.js";
import type { GameOwner } from "./games.js";
import { spinTimeWindow } from "./spins.js";

// Spins' inclusion proofs (CONTRACT §10, docs/fairness.md): each read as a few hundred bytes of its
// block (the head of its entries, its group of 16, a node per tree level) by the statement that
// finds the spin's block (fairness.ts, PROVABLE_BLOCK_COLUMNS), whatever the block's size.

export type SpinProofView = { spinId: string; blockId: number; index: number } & EntryProof;

/** A served entry: a spin's `fairness`. */
export interface SpinPosition {
  spinId: string;
  blockId: number;
  index: number;
}

/** What a verifier needs of one spin: its proof and its block, as `GET …/proof` and `GET …/blocks/{blockId}` show them. */
export interface SpinVerification {
  proof: SpinProofView;
  block: BlockRow;
}

/**
 * Parsed headers by the head they were read from (the header and the first entries): a codec is a
 * function of the header's bytes alone, so a page of spins of one block parses it once. The most
 * recent 1,024 heads are kept.
 */
const codecs = new Map<string, EntryCodec>();
const CODECS_KEPT = 1024;

/** The head read is cut at 1,024 bytes: a longer header (up to BLOCK_HEADER_MAX_BYTES) is read again whole. */
async function codecOf(db: Database, row: ProvableBlockRow): Promise<EntryCodec> {
  const key = row.head.toString("latin1");
  const kept = codecs.get(key);
  if (kept) return kept;
  let codec: EntryCodec;
  try {
    codec = EntryCodec.readHeader(row.head).codec;
  } catch (error) {
    if (row.head.length < 1024) throw error;
    return EntryCodec.readHeader(await readBlockHeader(db, row.id)).codec;
  }
  codecs.set(key, codec);
  if (codecs.size > CODECS_KEPT) codecs.delete(codecs.keys().next().value as string);
  return codec;
}

/**
 * A spin's proof and block from its block's row as the statements of fairness.ts read it; null for
 * a block sealed before provable fairness (no tree: its proof is 404 on its own).
 */
export async function verificationOf(
  db: Database,
  row: ProvableBlockRow,
  position: SpinPosition,
): Promise<SpinVerification | null> {
  const { head: _head, drawn_seed: seed, proof_group: group, proof_nodes: nodes, ...block } = row;
  if (!seed || !group || !nodes) return null;
  const { spinId, blockId, index } = position;
  const proof = entryProofOf({
    blockId,
    index,
    size: row.size,
    codec: await codecOf(db, row),
    group,
    nodes: Array.from({ length: nodes.length / 32 }, (_, at) => nodes.subarray(at * 32, at * 32 + 32)),
    seed,
    position: row.cycle_offset,
  });
  return { proof: { spinId, blockId, index, ...proof }, block };
}

/** The proofs and blocks of some spins (`?include=proof`), in one statement. */
export async function spinVerifications(
  db: Database,
  positions: readonly SpinPosition[],
): Promise<Map<string, SpinVerification>> {
  const found = new Map<string, SpinVerification>();
  if (positions.length === 0) return found;
  const rows = await readVerificationRows(db, positions);
  const bySpin = new Map(positions.map((position) => [position.spinId, position]));
  for (const { spin_id, ...row } of rows) {
    const verification = await verificationOf(db, row, bySpin.get(spin_id) as SpinPosition);
    if (verification) found.set(spin_id, verification);
  }
  return found;
}

/**
 * The inclusion proof of the owner's spin. 404 KS-4215 for a spin that is not theirs (or not in this
 * environment), for a forced sandbox spin (no block), and for one whose block was sealed before
 * provable fairness (it has no tree).
 */
export async function spinProof(db: Database, owner: GameOwner, spinId: string): Promise<SpinProofView> {
  const dated = spinTimeWindow(spinId);
  if (dated === null) throw new ServiceError(ErrorCode.NotFound, { message: "Spin not found" });
  const row = await readSpinProofRow(db, owner, spinId, dated);
  if (!row) throw new ServiceError(ErrorCode.NotFound, { message: "Spin not found" });
  const { spin_block, spin_index, ...block } = row;
  if (spin_block === null) {
    throw new ServiceError(ErrorCode.NotFound, {
      message: "A forced sandbox spin's outcome was drawn for it, not taken from a block: it has no proof",
    });
  }
  const verification = await verificationOf(db, block, { spinId, blockId: Number(spin_block), index: spin_index });
  if (!verification) {
    throw new ServiceError(ErrorCode.NotFound, {
      message: "This spin's block was sealed before provable fairness: it has no Merkle tree, so no proof",
    });
  }
  return verification.proof;
}
