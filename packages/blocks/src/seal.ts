import { type BlockDraft, drawBlock, drawIndependentBlock, newSeed, type OutcomeDrawer } from "@outcomes/core";
import { blocks, type Database, type Executor, games, parSheets, poolCycles, type Transaction } from "@outcomes/db";
import type { GameOwner } from "@outcomes/queue";
import { seedHashOf, shuffleCycle } from "@outcomes/sdk";
import { sql } from "drizzle-orm";
import { draftOffThread } from "./tree-hasher.js";

export interface LockedGame extends GameOwner {
  lowReserveArmed: boolean;
  /** The PAR sheet document as uploaded. */
  document: unknown;
}

/**
 * Takes the game's row lock for one block's generation. FOR NO KEY UPDATE, not FOR UPDATE: it
 * excludes other generators and the spin path's block-start bookkeeping, yet lets the sealing
 * transaction (another connection) insert blocks whose foreign key share-locks this row.
 */
export async function lockGame(lock: Transaction, gameId: number): Promise<LockedGame | null> {
  const [row] = await lock.execute<{
    id: number;
    partner_id: string;
    environment: string;
    low_reserve_armed: boolean;
    document: unknown;
  }>(sql`
    select g.id, g.partner_id, g.environment, g.low_reserve_armed, s.document
    from ${games} g join ${parSheets} s on s.id = g.par_sheet_id
    where g.id = ${gameId}
    for no key update of g`);
  return row
    ? {
        id: row.id,
        partnerId: row.partner_id,
        environment: row.environment,
        lowReserveArmed: row.low_reserve_armed,
        document: row.document,
      }
    : null;
}

export async function armLowReserve(lock: Transaction, gameId: number): Promise<void> {
  await lock.execute(sql`update ${games} set low_reserve_armed = true where id = ${gameId}`);
}

export async function lastSequence(db: Database | Transaction, gameId: number): Promise<number> {
  const [row] = await db.execute<{ last: number }>(sql`
    select coalesce(max(sequence), 0)::int as last from ${blocks} where game_id = ${gameId}`);
  return row?.last ?? 0;
}

export interface SealedBlock {
  blockId: number;
  sequence: number;
  draft: BlockDraft;
}

/**
 * Ids for `count` blocks about to be drawn, from the blocks' identity sequence: the id is part of
 * every leaf, so it is known before the Merkle root is, and the root before the block is sealed.
 * bigint ids come back from postgres.js as strings.
 */
export async function reserveBlockIds(db: Executor, count: number): Promise<number[]> {
  const rows = await db.execute<{ id: string }>(sql`
    select nextval(pg_get_serial_sequence('blocks', 'id')) as id from generate_series(1, ${count}::int)`);
  return rows.map((row) => Number(row.id));
}

type PreviousBlock = {
  sequence: number;
  cycle: number;
  cycle_offset: number;
  size: number;
};

/**
 * Draws and seals the game's next block (entries and their commitments, status ready) in its own
 * committed transaction, so it is in the record before any of it can be served. Call it under the
 * game's lock; the unique (game_id, sequence) index backs that up.
 */
export async function sealNextBlock(
  db: Database,
  gameId: number,
  drawer: OutcomeDrawer,
  blockSize: number,
): Promise<SealedBlock> {
  return db.transaction(async (tx) => {
    const [previous] = await tx.execute<PreviousBlock>(sql`
      select sequence, cycle, cycle_offset, size from ${blocks}
      where game_id = ${gameId} order by sequence desc limit 1`);
    const sequence = (previous?.sequence ?? 0) + 1;
    const [blockId] = await reserveBlockIds(tx, 1);
    if (blockId === undefined) throw new Error("no block id reserved");
    if (drawer.sheet.drawMode !== "finite_pool") {
      const draft = await draftOffThread(drawer, drawIndependentBlock(drawer, blockSize), blockId);
      await insertBlock(tx, gameId, sequence, draft, { cycle: 0, offset: 0 });
      return { blockId, sequence, draft };
    }
    const slice = await nextPoolSlice(tx, gameId, drawer, previous, blockSize);
    const draft = await draftOffThread(drawer, drawBlock(drawer, slice.seed, slice.tiers, slice.offset), blockId);
    await insertBlock(tx, gameId, sequence, { ...draft, seed: null }, slice);
    return { blockId, sequence, draft };
  });
}

/** A finite_pool block keeps no seed of its own: its cycle's is in pool_cycles. */
async function insertBlock(
  tx: Transaction,
  gameId: number,
  sequence: number,
  draft: Omit<BlockDraft, "seed"> & { seed: Buffer | null },
  slice: { cycle: number; offset: number },
): Promise<void> {
  await tx.insert(blocks).values({
    id: draft.blockId,
    gameId,
    sequence,
    cycle: slice.cycle,
    cycleOffset: slice.offset,
    size: draft.size,
    entries: draft.entries,
    commitment: draft.commitment,
    seed: draft.seed,
    seedHash: draft.seedHash,
    merkleRoot: draft.merkleRoot,
    merkleLevels: draft.merkleLevels,
    status: "ready",
  });
}

/**
 * Seals an independent block drawn beforehand (its tiers do not depend on the record) in one
 * autocommitted statement: the next sequence is taken in the same statement, so the block is in
 * the record, committed, when this returns, with one round trip instead of four (BEGIN, look-up,
 * insert, COMMIT). Call it under the game's lock; the unique (game_id, sequence) index backs that up.
 */
export async function sealDrawnBlock(db: Database, gameId: number, draft: BlockDraft): Promise<SealedBlock> {
  const [row] = await db.execute<{ sequence: number }>(sql`
    insert into ${blocks} (id, game_id, sequence, size, entries, commitment, seed, seed_hash, merkle_root,
      merkle_levels, status)
    select ${draft.blockId}, ${gameId}, coalesce(max(sequence), 0) + 1, ${draft.size}, ${draft.entries},
      ${draft.commitment}, ${draft.seed}, ${draft.seedHash}, ${draft.merkleRoot}, ${draft.merkleLevels}, 'ready'
    from ${blocks} where game_id = ${gameId}
    returning sequence`);
  if (!row) throw new Error("block insert returned no row");
  return { blockId: draft.blockId, sequence: row.sequence, draft };
}

/**
 * finite_pool: the next cut of the current cycle, or the first cut of a new one. A new cycle gets
 * its seed, is shuffled from it once and stored whole (with the seed's hash, committed in the same
 * transaction as its first block), so later blocks continue exactly where the last one ended,
 * whichever worker cuts them. The last block of a cycle is shorter when the cycle is not a multiple
 * of BLOCK_SIZE (blocks never span two cycles). A cycle stored before provable fairness has no
 * seed and is not continued: its blocks could never be revealed.
 */
async function nextPoolSlice(
  tx: Transaction,
  gameId: number,
  drawer: OutcomeDrawer,
  previous: PreviousBlock | undefined,
  blockSize: number,
): Promise<{ tiers: Uint8Array; seed: Buffer; cycle: number; offset: number }> {
  if (previous && previous.cycle > 0) {
    const offset = previous.cycle_offset + previous.size;
    const [stored] = await tx.execute<{ length: number; slice: Buffer; seed: Buffer | null }>(sql`
      select octet_length(tiers) as length, substring(tiers from ${offset + 1}::int for ${blockSize}::int) as slice, seed
      from ${poolCycles} where game_id = ${gameId} and cycle = ${previous.cycle}`);
    if (!stored) throw new Error(`pool cycle ${previous.cycle} of game ${gameId} is missing`);
    if (offset < stored.length && stored.seed) {
      return { tiers: new Uint8Array(stored.slice), seed: stored.seed, cycle: previous.cycle, offset };
    }
  }
  const cycle = (previous?.cycle ?? 0) + 1;
  const seed = newSeed();
  const order = shuffleCycle(drawer.sheet, seed);
  await tx.insert(poolCycles).values({
    gameId,
    cycle,
    tiers: Buffer.from(order.buffer, order.byteOffset, order.length),
    seed,
    seedHash: seedHashOf(seed),
  });
  return { tiers: order.subarray(0, blockSize), seed, cycle, offset: 0 };
}
