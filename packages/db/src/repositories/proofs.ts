import {
  BLOCK_HEADER_MAX_BYTES,
  EntryCodec,
  type EntryProof,
  ErrorCode,
  entryProofOf,
  ServiceError,
  STORED_FROM_LEVEL,
} from "@outcomes/core";
import type { Database } from "../client.js";
import { BLOCK_COLUMNS, type BlockRow } from "./block-select.js";
import type { GameOwner } from "./games.js";
import { spinTimeWindow } from "./spins.js";
import { type SqlPool, sqlClientOf } from "./sql-client.js";

// Spins' inclusion proofs (CONTRACT §10, docs/fairness.md): each read as a few hundred bytes of its
// block (the head of its entries, its group of 16, a node per tree level) by the statement that
// finds the spin's block, whatever the block's size.

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
 * The head of a block's entries read with its proofs. Headers are ~150 bytes for a sheet of a dozen
 * symbols and tiers; a longer one (up to BLOCK_HEADER_MAX_BYTES) is read again whole.
 */
const HEAD_BYTES = 1024;
const GROUP = 2 ** STORED_FROM_LEVEL;
/** An entry's bytes: a tier, then reels × rows symbols (header bytes 4 and 5; packages/core entries.ts). */
const ENTRY_BYTES =
  "(1 + get_byte(substring(b.entries from 5 for 1), 0) * get_byte(substring(b.entries from 6 for 1), 0))";

/**
 * Columns reading, beside block `b`'s public ones, what the proof of its entry `index` (an SQL
 * expression) needs, and only that (core's `proofReads` names the same, and `entryProofOf` checks
 * them): the head of the entries; `proof_group`, the stored entries of the entry's group of 16
 * (the body ends the value); `proof_nodes`, the stored tree nodes, 32 bytes each: the group's,
 * one per level above it that has a sibling, then the root. Stored levels start at groups of 16
 * (a block of at most 16 keeps only its root) and halve, rounding up, to the root.
 */
export function provableBlockColumns(index: string): string {
  const first = `((${index}) / ${GROUP}) * ${GROUP}`;
  return `${BLOCK_COLUMNS},
    substring(b.entries from 1 for ${HEAD_BYTES}) as head, coalesce(b.seed, c.seed) as drawn_seed,
    case when b.merkle_levels is not null then substring(b.entries
      from octet_length(b.entries) - (b.size - ${first}) * ${ENTRY_BYTES} + 1
      for least(${GROUP}, b.size - ${first}) * ${ENTRY_BYTES}) end as proof_group,
    case when b.merkle_levels is not null then (
      with recursive tree_level(k, nodes, at, node) as (
        select 0, (b.size + ${GROUP - 1}) / ${GROUP}, 0, (${index}) / ${GROUP}
        union all
        select k + 1, (nodes + 1) / 2, at + nodes * 32, node / 2 from tree_level where nodes > 1
      )
      select string_agg(substring(b.merkle_levels from node_at + 1 for 32), ''::bytea order by k) from (
        select -1 as k, at + node * 32 as node_at from tree_level where k = 0
        union all select k, at + (node # 1) * 32 from tree_level where nodes > 1 and (node # 1) < nodes
        union all select 2147483647, at from tree_level where nodes = 1
      ) path) end as proof_nodes`;
}
export type ProvableBlockRow = BlockRow & {
  head: Buffer;
  drawn_seed: Buffer | null;
  proof_group: Buffer | null;
  proof_nodes: Buffer | null;
};

async function headerOf(sql: SqlPool, row: ProvableBlockRow): Promise<EntryCodec> {
  try {
    return EntryCodec.readHeader(row.head).codec;
  } catch (error) {
    if (row.head.length < HEAD_BYTES) throw error;
  }
  const [whole] = await sql.unsafe<{ head: Buffer }[]>(
    `select substring(entries from 1 for ${BLOCK_HEADER_MAX_BYTES}) as head from blocks where id = $1`,
    [row.id],
    { prepare: true },
  );
  return EntryCodec.readHeader((whole as { head: Buffer }).head).codec;
}

/**
 * A spin's proof and block from its block's row read with `provableBlockColumns`; null for a block
 * sealed before provable fairness (no tree: its proof is 404 on its own).
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
    codec: await headerOf(sqlClientOf(db), row),
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
  const rows = await sqlClientOf(db).unsafe<Array<ProvableBlockRow & { spin_id: string }>>(
    `select p.spin_id, ${provableBlockColumns("p.entry")}
     from unnest($1::text[], $2::bigint[], $3::int[]) as p(spin_id, block_id, entry)
       join blocks b on b.id = p.block_id left join pool_cycles c on c.game_id = b.game_id and c.cycle = b.cycle`,
    [positions.map((p) => p.spinId), positions.map((p) => p.blockId), positions.map((p) => p.index)],
    { prepare: true },
  );
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
  // Time bounds as sub-selects: pruned at the statement's start, one plan kept (see replays.ts).
  const [row] = await sqlClientOf(db).unsafe<
    Array<ProvableBlockRow & { spin_block: string | null; spin_index: number }>
  >(
    `select s.block_id as spin_block, s.outcome_index as spin_index, ${provableBlockColumns("s.outcome_index")}
     from spins s left join blocks b on b.id = s.block_id
       left join pool_cycles c on c.game_id = b.game_id and c.cycle = b.cycle
     where s.id = $1 and s.partner_id = $2 and s.environment = $3
       and s.created_at between (select $4::timestamptz) and (select $5::timestamptz)`,
    [spinId, owner.partnerId, owner.environment, dated.from, dated.to],
    { prepare: true },
  );
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
