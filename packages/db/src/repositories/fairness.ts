import { BLOCK_HEADER_MAX_BYTES, ErrorCode, ServiceError, STORED_FROM_LEVEL } from "@outcomes/core";
import { sql } from "drizzle-orm";
import type { Database, Executor } from "../client.js";
import { blocks } from "../schema/blocks.js";
import type { GameOwner } from "./games.js";
import type { Paged, PageWindow } from "./paging.js";
import { sqlClientOf } from "./sql-client.js";

// Provable fairness as partners read it (CONTRACT §10, docs/fairness.md): a game's blocks with
// their commitments, and the statements that read a spin's block with what its proof needs (the
// proofs themselves: proofs.ts). SQL text is built here from this file's constants only
// (tests/security/sql-safety.test.ts); values go in as parameters.

/** A block row with its cycle's commitment, as `presentBlock` (packages/records) shows it. */
export type BlockRow = {
  id: string;
  game_id: number;
  sequence: number;
  size: number;
  status: "ready" | "serving" | "exhausted";
  cycle: number;
  cycle_offset: number;
  seed_hash: string | null;
  merkle_root: string | null;
  created_at: Date;
  started_at: Date | null;
  exhausted_at: Date | null;
  closed_at: Date | null;
  revealed_at: Date | null;
  seed: Buffer | null;
  cycle_seed_hash: string | null;
  cycle_revealed_at: Date | null;
  cycle_blocks: number | null;
};

/** A block and its cycle; the seed only once revealed (it never leaves the database before). */
const BLOCK_COLUMNS = `
    b.id, b.game_id, b.sequence, b.size, b.status, b.cycle, b.cycle_offset, b.seed_hash, b.merkle_root,
    b.created_at, b.started_at, b.exhausted_at, b.closed_at, b.revealed_at,
    case when b.revealed_at is not null then coalesce(b.seed, c.seed) end as seed,
    c.seed_hash as cycle_seed_hash, c.revealed_at as cycle_revealed_at,
    case when b.cycle > 0 then
      (select count(*) from blocks k where k.game_id = b.game_id and k.cycle = b.cycle)::int end as cycle_blocks`;
const BLOCK_FROM = "from blocks b left join pool_cycles c on c.game_id = b.game_id and c.cycle = b.cycle";
const BLOCK_SELECT = `select ${BLOCK_COLUMNS} ${BLOCK_FROM}`;
const blockSelect = sql.raw(BLOCK_SELECT);

/**
 * The owner's game, its block count and a page of its blocks, newest first, in one statement: one
 * row per block of the page, or a single row of nulls after `owned` and `total` when the page is
 * empty (or the game is not the owner's: then `owned` is false and nothing else was read).
 */
const OWN_GAME_BLOCKS_PAGE = `
  select g.id is not null as owned, t.total, p.*
  from (values (1)) as one (x)
  left join games g on g.id = $1 and g.partner_id = $2 and g.environment = $3
  left join lateral (select count(*)::int as total from blocks where game_id = g.id) t on true
  left join lateral (${BLOCK_SELECT} where b.game_id = g.id order by b.sequence desc limit $4 offset $5) p on true
  order by p.sequence desc`;

/** A page of the owner's game's blocks, newest first, and how many it has; 403 KS-4006 for another's game. */
export async function listOwnGameBlocks(
  db: Database,
  owner: GameOwner,
  gameId: number,
  page: PageWindow,
): Promise<Paged<BlockRow>> {
  // The block columns are null on the row that stands for an empty page.
  const rows = await sqlClientOf(db).unsafe<Array<BlockRow & { owned: boolean; total: number | null }>>(
    OWN_GAME_BLOCKS_PAGE,
    [gameId, owner.partnerId, owner.environment, page.limit, page.offset],
    { prepare: true },
  );
  const [first] = rows;
  if (!first?.owned) throw new ServiceError(ErrorCode.GameNotOwned);
  return { rows: rows.filter((row) => row.id !== null), total: first.total ?? 0 };
}

const unknownBlock = () => new ServiceError(ErrorCode.NotFound, { message: "Block not found" });

/** One block of the game, or 404 KS-4215. */
export async function requireGameBlock(db: Executor, gameId: number, blockId: number): Promise<BlockRow> {
  const [row] = await db.execute<BlockRow>(sql`${blockSelect} where b.game_id = ${gameId} and b.id = ${blockId}`);
  if (!row) throw unknownBlock();
  return row;
}

/** Entries per stored Merkle node of the lowest stored level (2 ** STORED_FROM_LEVEL, packages/core). */
const GROUP = 16;
if (GROUP !== 2 ** STORED_FROM_LEVEL) throw new Error("the proofs' SQL reads groups of 16 leaves");

/**
 * A spin's block `b` (its cycle `c`) with, beside its public columns, what the proof of its entry
 * `e.entry` needs and only that (core's `proofReads` names the same, and `entryProofOf` checks
 * them): `head`, the head of the entries (their codec; a header past 1,024 bytes is read again
 * whole); `drawn_seed`, the seed that salts them; `proof_group`, the stored entries of the entry's
 * group of 16 (an entry is a tier byte and reels × rows symbol bytes, header bytes 4 and 5, and the
 * body ends the value: packages/core entries.ts); `proof_nodes`, stored tree nodes of 32 bytes, the
 * group's, one per level above it that has a sibling, then the root. The stored levels start at
 * groups of 16 (a block of at most 16 keeps only its root) and halve, rounding up, to the root.
 */
const PROVABLE_BLOCK_COLUMNS = `${BLOCK_COLUMNS},
    substring(b.entries from 1 for 1024) as head, coalesce(b.seed, c.seed) as drawn_seed,
    case when b.merkle_levels is not null then substring(b.entries
      from octet_length(b.entries) - (b.size - (e.entry / ${GROUP}) * ${GROUP})
        * (1 + get_byte(substring(b.entries from 5 for 1), 0) * get_byte(substring(b.entries from 6 for 1), 0)) + 1
      for least(${GROUP}, b.size - (e.entry / ${GROUP}) * ${GROUP})
        * (1 + get_byte(substring(b.entries from 5 for 1), 0) * get_byte(substring(b.entries from 6 for 1), 0)))
    end as proof_group,
    case when b.merkle_levels is not null then (
      with recursive tree_level(k, nodes, at, node) as (
        select 0, (b.size + ${GROUP} - 1) / ${GROUP}, 0, e.entry / ${GROUP}
        union all
        select k + 1, (nodes + 1) / 2, at + nodes * 32, node / 2 from tree_level where nodes > 1
      )
      select string_agg(substring(b.merkle_levels from node_at + 1 for 32), ''::bytea order by k) from (
        select -1 as k, at + node * 32 as node_at from tree_level where k = 0
        union all select k, at + (node # 1) * 32 from tree_level where nodes > 1 and (node # 1) < nodes
        union all select 2147483647, at from tree_level where nodes = 1
      ) path) end as proof_nodes`;

/** A block row read with PROVABLE_BLOCK_COLUMNS. */
export type ProvableBlockRow = BlockRow & {
  head: Buffer;
  drawn_seed: Buffer | null;
  proof_group: Buffer | null;
  proof_nodes: Buffer | null;
};

/**
 * Time bounds of a spin look-up are sub-selects: partitions are pruned when the statement starts
 * rather than when it is planned, so Postgres keeps one plan instead of planning the join anew for
 * every request (the replay statement: 1.0–1.7 ms against 5.6–5.7 ms, measured).
 */
const SPIN_PROOF_ROW = `
  select s.block_id as spin_block, s.outcome_index as spin_index, ${PROVABLE_BLOCK_COLUMNS}
  from spins s cross join lateral (select s.outcome_index as entry) e
    left join blocks b on b.id = s.block_id left join pool_cycles c on c.game_id = b.game_id and c.cycle = b.cycle
  where s.id = $1 and s.partner_id = $2 and s.environment = $3
    and s.created_at between (select $4::timestamptz) and (select $5::timestamptz)`;

/** The owner's spin's block position, and its block as its proof reads it (none: no such spin). */
export async function readSpinProofRow(
  db: Database,
  owner: GameOwner,
  spinId: string,
  dated: { from: string; to: string },
): Promise<(ProvableBlockRow & { spin_block: string | null; spin_index: number }) | undefined> {
  const [row] = await sqlClientOf(db).unsafe<
    Array<ProvableBlockRow & { spin_block: string | null; spin_index: number }>
  >(SPIN_PROOF_ROW, [spinId, owner.partnerId, owner.environment, dated.from, dated.to], { prepare: true });
  return row;
}

const VERIFICATION_ROWS = `
  select e.spin_id, ${PROVABLE_BLOCK_COLUMNS}
  from unnest($1::text[], $2::bigint[], $3::int[]) as e(spin_id, block_id, entry)
    join blocks b on b.id = e.block_id left join pool_cycles c on c.game_id = b.game_id and c.cycle = b.cycle`;

/** The blocks of served entries as their proofs read them, one row per entry (an unknown block: none). */
export function readVerificationRows(
  db: Database,
  positions: readonly { spinId: string; blockId: number; index: number }[],
): Promise<Array<ProvableBlockRow & { spin_id: string }>> {
  return sqlClientOf(db).unsafe(
    VERIFICATION_ROWS,
    [positions.map((p) => p.spinId), positions.map((p) => p.blockId), positions.map((p) => p.index)],
    { prepare: true },
  );
}

/**
 * A spin (by its id's time) with its player's own id, void, free round, game name, its sheet's
 * symbols (not the whole document), and its block as its proof reads it. The spin's columns are
 * named `spin_…`: the block's take the plain names.
 */
const REPLAY_SPIN_ROW = `
  select s.id as spin_id, s.partner_id as spin_partner, s.environment as spin_environment, s.game_id as spin_game,
    s.player_id as spin_player, s.block_id as spin_block, s.outcome_index as spin_index, s.prize_tier as spin_tier,
    s.multiplier_millionths as spin_multiplier, s.wager_micros as spin_wager, s.payout_micros as spin_payout,
    s.balance_after_micros as spin_balance, s.presentation as spin_presentation, s.created_at as spin_created_at,
    p.external_id, v.reason, v.voided_at, f.grant_id, f.rounds_left, g.name as game_name,
    sheet.document -> 'symbols' as symbols, ${PROVABLE_BLOCK_COLUMNS}
  from spins s
    cross join lateral (select s.outcome_index as entry) e
    join players p on p.id = s.player_id
    join games g on g.id = s.game_id
    join par_sheets sheet on sheet.id = g.par_sheet_id
    left join spin_voids v on v.spin_id = s.id
    left join free_round_spins f on f.spin_id = s.id
    left join blocks b on b.id = s.block_id
    left join pool_cycles c on c.game_id = b.game_id and c.cycle = b.cycle
  where s.id = $1 and s.created_at between (select $2::timestamptz) and (select $3::timestamptz)`;

/** A replay page's row (see REPLAY_SPIN_ROW); replays.ts maps it. */
export async function readReplaySpinRow<Row>(
  db: Database,
  spinId: string,
  dated: { from: string; to: string },
): Promise<Row | undefined> {
  const [row] = await sqlClientOf(db).unsafe(REPLAY_SPIN_ROW, [spinId, dated.from, dated.to], { prepare: true });
  return row as Row | undefined;
}

/** A block's whole header, for the rare one longer than the head its proofs read first. */
export async function readBlockHeader(db: Database, blockId: string): Promise<Buffer> {
  const [row] = await db.execute<{ head: Buffer }>(sql`
    select substring(entries from 1 for ${BLOCK_HEADER_MAX_BYTES}::int) as head from ${blocks} where id = ${blockId}`);
  if (!row) throw unknownBlock();
  return row.head;
}
