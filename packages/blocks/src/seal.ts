import { type BlockDraft, draftBlock, type OutcomeDrawer, type ParSheetAnalysis, shuffledCycle } from "@outcomes/core";
import { blocks, type Database, games, parSheets, poolCycles, type Transaction } from "@outcomes/db";
import type { GameOwner } from "@outcomes/queue";
import { sql } from "drizzle-orm";

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

type PreviousBlock = {
  sequence: number;
  cycle: number;
  cycle_offset: number;
  size: number;
};

/**
 * Draws and seals the game's next block (entries + SHA-256 commitment, status ready) in its own
 * committed transaction, so it is in the record before any of it can be served. Call it under the
 * game's lock; the unique (game_id, sequence) index backs that up.
 */
export async function sealNextBlock(
  db: Database,
  gameId: number,
  sheet: ParSheetAnalysis,
  drawer: OutcomeDrawer,
  blockSize: number,
): Promise<SealedBlock> {
  return db.transaction(async (tx) => {
    const [previous] = await tx.execute<PreviousBlock>(sql`
      select sequence, cycle, cycle_offset, size from ${blocks}
      where game_id = ${gameId} order by sequence desc limit 1`);
    const sequence = (previous?.sequence ?? 0) + 1;
    const slice =
      sheet.drawMode === "finite_pool"
        ? await nextPoolSlice(tx, gameId, sheet, previous, blockSize)
        : { tiers: drawer.drawTiers(blockSize), cycle: 0, offset: 0 };
    const draft = draftBlock(drawer, slice.tiers);
    const [row] = await tx
      .insert(blocks)
      .values({
        gameId,
        sequence,
        cycle: slice.cycle,
        cycleOffset: slice.offset,
        size: draft.size,
        entries: draft.entries,
        commitment: draft.commitment,
        status: "ready",
      })
      .returning({ id: blocks.id });
    if (!row) throw new Error("block insert returned no row");
    return { blockId: row.id, sequence, draft };
  });
}

/**
 * Seals an independent block drawn beforehand (its tiers do not depend on the record) in one
 * autocommitted statement: the next sequence is taken in the same statement, so the block is in
 * the record, committed, when this returns, with one round trip instead of four (BEGIN, look-up,
 * insert, COMMIT). Call it under the game's lock; the unique (game_id, sequence) index backs that up.
 */
export async function sealDrawnBlock(db: Database, gameId: number, draft: BlockDraft): Promise<SealedBlock> {
  // bigint ids come back from postgres.js as strings.
  const [row] = await db.execute<{ id: string; sequence: number }>(sql`
    insert into ${blocks} (game_id, sequence, size, entries, commitment, status)
    select ${gameId}, coalesce(max(sequence), 0) + 1, ${draft.size}, ${draft.entries}, ${draft.commitment}, 'ready'
    from ${blocks} where game_id = ${gameId}
    returning id, sequence`);
  if (!row) throw new Error("block insert returned no row");
  return { blockId: Number(row.id), sequence: row.sequence, draft };
}

/**
 * finite_pool: the next cut of the current cycle, or the first cut of a new one. A new cycle is
 * shuffled once and stored whole with its first block, so later blocks continue exactly where the
 * last one ended, whichever worker cuts them. The last block of a cycle is shorter when the cycle
 * is not a multiple of BLOCK_SIZE (blocks never span two cycles).
 */
async function nextPoolSlice(
  tx: Transaction,
  gameId: number,
  sheet: ParSheetAnalysis,
  previous: PreviousBlock | undefined,
  blockSize: number,
): Promise<{ tiers: Uint8Array; cycle: number; offset: number }> {
  if (previous && previous.cycle > 0) {
    const offset = previous.cycle_offset + previous.size;
    const [stored] = await tx.execute<{ length: number; slice: Buffer }>(sql`
      select octet_length(tiers) as length, substring(tiers from ${offset + 1}::int for ${blockSize}::int) as slice
      from ${poolCycles} where game_id = ${gameId} and cycle = ${previous.cycle}`);
    if (!stored) throw new Error(`pool cycle ${previous.cycle} of game ${gameId} is missing`);
    if (offset < stored.length) return { tiers: new Uint8Array(stored.slice), cycle: previous.cycle, offset };
  }
  const cycle = (previous?.cycle ?? 0) + 1;
  const order = shuffledCycle(sheet.tiers);
  await tx
    .insert(poolCycles)
    .values({ gameId, cycle, tiers: Buffer.from(order.buffer, order.byteOffset, order.length) });
  return { tiers: order.subarray(0, blockSize), cycle, offset: 0 };
}
