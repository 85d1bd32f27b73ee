import {
  BLOCK_HEADER_MAX_BYTES,
  EntryCodec,
  ErrorCode,
  type RevealedEntry,
  revealedEntriesOf,
  ServiceError,
} from "@outcomes/core";
import { sql } from "drizzle-orm";
import type { Executor } from "../client.js";
import { blocks } from "../schema/blocks.js";
import { poolCycles } from "../schema/pool-cycles.js";
import { spinVoids } from "../schema/spin-voids.js";
import { spinOutcomes } from "../schema/spins.js";

// A revealed block's entries, a page at a time (CONTRACT §10, docs/fairness.md "Endpoints").

const unknownBlock = () => new ServiceError(ErrorCode.NotFound, { message: "Block not found" });

/** A revealed block, as its pages of entries need it. */
export interface RevealedBlock {
  blockId: number;
  size: number;
  /** The block's seed (independent) or its cycle's (finite_pool). */
  seed: Buffer;
  /** The block's offset in its finite_pool cycle; 0 for independent blocks. */
  position: number;
  /**
   * The row's version (its `xmin`: any write to the row changes it) and how many of its entries'
   * spins were voided (voids are only ever added, and they touch no block row), so an answer kept
   * under it is never one the record no longer gives.
   */
  version: string;
}

/** A revealed entry, the spin that used it (null: retired unserved), and whether that spin was voided. */
export type RevealedEntryRow = RevealedEntry & { spinId: string | null; voided: boolean };

/** One of the game's revealed blocks; 404 KS-4215 when it has no such block, 409 KS-4216 before the reveal. */
export async function requireRevealedBlock(db: Executor, gameId: number, blockId: number): Promise<RevealedBlock> {
  const [block] = await db.execute<{
    size: number;
    seed: Buffer | null;
    cycle_offset: number;
    version: string;
    sealed_before_fairness: boolean;
  }>(sql`
    select b.size, case when b.revealed_at is not null then coalesce(b.seed, c.seed) end as seed, b.cycle_offset,
      b.xmin::text || '.' || (select count(*) from ${spinVoids} v where v.block_id = b.id) as version,
      b.seed_hash is null as sealed_before_fairness
    from ${blocks} b left join ${poolCycles} c on c.game_id = b.game_id and c.cycle = b.cycle
    where b.game_id = ${gameId} and b.id = ${blockId}`);
  if (!block) throw unknownBlock();
  if (block.sealed_before_fairness) {
    throw new ServiceError(ErrorCode.BlockNotRevealed, {
      message: "This block was sealed before provable fairness: it has no seed to reveal",
    });
  }
  if (!block.seed) throw new ServiceError(ErrorCode.BlockNotRevealed);
  return { blockId, size: block.size, seed: block.seed, position: block.cycle_offset, version: block.version };
}

/**
 * Entries `first` to `first + count − 1` of a revealed block (within its size), with their salts and
 * spins. Reads the block's header, then only those entries' bytes (a slice of `entries`), their
 * `spin_outcomes` rows (a range of its primary key) and their voids (a range of `spin_voids_block_idx`),
 * so a page costs the same in any block.
 */
export async function revealedEntryRange(
  db: Executor,
  block: RevealedBlock,
  first: number,
  count: number,
): Promise<RevealedEntryRow[]> {
  const [stored] = await db.execute<{ head: Buffer }>(sql`
    select substring(entries from 1 for ${BLOCK_HEADER_MAX_BYTES}::int) as head from ${blocks} where id = ${block.blockId}`);
  if (!stored) throw unknownBlock();
  const { codec, bodyStart } = EntryCodec.readHeader(stored.head);
  const [[range], used, voided] = await Promise.all([
    db.execute<{ body: Buffer }>(sql`
      select substring(entries from ${bodyStart + first * codec.entryBytes + 1}::int
        for ${count * codec.entryBytes}::int) as body
      from ${blocks} where id = ${block.blockId}`),
    db.execute<{ outcome_index: number; id: string }>(sql`
      select outcome_index, spin_id as id from ${spinOutcomes}
      where block_id = ${block.blockId} and outcome_index >= ${first} and outcome_index < ${first + count}`),
    db.execute<{ outcome_index: number }>(sql`
      select outcome_index from ${spinVoids}
      where block_id = ${block.blockId} and outcome_index >= ${first} and outcome_index < ${first + count}`),
  ]);
  if (!range || range.body.length !== count * codec.entryBytes) {
    throw new Error(`block ${block.blockId} holds fewer entries than its size`);
  }
  const spinOf = new Map(used.map((row) => [row.outcome_index, row.id]));
  const voidedAt = new Set(voided.map((row) => row.outcome_index));
  return revealedEntriesOf({ codec, body: range.body, first, seed: block.seed, position: block.position }).map(
    (entry) => ({ ...entry, spinId: spinOf.get(entry.index) ?? null, voided: voidedAt.has(entry.index) }),
  );
}
