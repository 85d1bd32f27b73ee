import type { Environment } from "@outcomes/core";
import { eq, sql } from "drizzle-orm";
import type { Executor } from "../client.js";
import { blocks } from "../schema/blocks.js";
import { games } from "../schema/games.js";
import { spinOutcomes } from "../schema/spins.js";
import type { NewEvent } from "./events.js";
import { type Queryable, rowsOf, type SqlClient } from "./sql-client.js";

/**
 * Block bookkeeping of the spin path and the reserve figures. A block is `ready` until its first
 * outcome is taken, `serving` while it is being taken, `exhausted` once its last index is taken.
 */
export interface ReserveSettings {
  minReadyBlocks: number;
}

export interface BlockProgress {
  /** The block left `ready` with this spin (its first outcome was taken). */
  started: boolean;
  /** Fewer than MIN_READY_BLOCKS are ready: enqueue `blocks.generate` after the commit. */
  enqueueGeneration: boolean;
  gameId: number | null;
  /** A `block.low_reserve` for the caller to store with the transaction's other events (`insertEvents`). */
  lowReserve: NewEvent | null;
}

/**
 * Call in the spin's transaction, after the spin row is written, for the outcome it used (see
 * `markBlocksProgress`, of which this is the one-outcome case).
 */
export async function markBlockProgress(
  tx: Queryable,
  outcome: { blockId: number; index: number },
  settings: ReserveSettings,
): Promise<BlockProgress> {
  const [progress] = await markBlocksProgress(tx, [outcome], settings);
  return progress!;
}

/**
 * The block bookkeeping of a transaction's spins, for the outcomes they used that are a block's first
 * or last (answered in the order given). Costs one indexed statement per outcome that changes
 * nothing for the outcomes between a block's first and last; only those two lock the block row, so
 * spins never queue on it. The lock is FOR NO KEY UPDATE: it does not wait for the key-share locks
 * other spins' foreign keys hold on the block.
 *
 * Locks come in one global order: every block row first, in block order, then the games whose
 * blocks started, in game order. A batch that took a game's lock and then reached for a block
 * another batch held (which in turn waited for that game) was a deadlock on small blocks.
 */
export async function markBlocksProgress(
  tx: Queryable,
  outcomes: readonly { blockId: number; index: number }[],
  settings: ReserveSettings,
): Promise<BlockProgress[]> {
  const order = outcomes.map((_, i) => i);
  order.sort((a, b) => outcomes[a]!.blockId - outcomes[b]!.blockId || outcomes[a]!.index - outcomes[b]!.index);
  const progress: BlockProgress[] = outcomes.map(() => ({
    started: false,
    enqueueGeneration: false,
    gameId: null,
    lowReserve: null,
  }));
  for (const i of order) {
    const { started, gameId } = await markBlock(tx, outcomes[i]!);
    Object.assign(progress[i]!, { started, gameId });
  }
  const startedGames = [...new Set(progress.filter((p) => p.started).map((p) => p.gameId!))].sort((a, b) => a - b);
  for (const gameId of startedGames) {
    const reserve = await onBlockStarted(tx, gameId, settings);
    const first = progress.find((p) => p.started && p.gameId === gameId)!;
    first.lowReserve = reserve.lowReserve;
    for (const p of progress) if (p.started && p.gameId === gameId) p.enqueueGeneration = reserve.enqueueGeneration;
  }
  return progress;
}

async function markBlock(
  tx: Queryable,
  outcome: { blockId: number; index: number },
): Promise<{ started: boolean; gameId: number | null }> {
  const rows = await rowsOf<{ game_id: number; previous: string }>(
    tx,
    sql`
    with target as (
      select id, status as previous from ${blocks}
      where id = ${outcome.blockId} and status <> 'exhausted'
        and (${outcome.index}::int = 0 or ${outcome.index}::int + 1 >= size)
      for no key update
    )
    update ${blocks} b set
      status = case when ${outcome.index}::int + 1 >= b.size then 'exhausted' else 'serving' end,
      started_at = coalesce(b.started_at, now()),
      exhausted_at = case when ${outcome.index}::int + 1 >= b.size then now() else b.exhausted_at end
    from target where b.id = target.id
    returning b.game_id, target.previous`,
  );
  const row = rows[0];
  // The last index may commit before index 0 (parallel spins): the block starts with whichever is first.
  return { started: row?.previous === "ready", gameId: row?.game_id ?? null };
}

/**
 * A block of the game just left `ready`. Under the game's row lock (block starts of one game are
 * serialised, so each sees the others' effect on the count), when fewer than MIN_READY_BLOCKS remain:
 * one `block.low_reserve` if the reserve was armed (filled since the last drop), and generation is
 * asked for. The game is re-armed by the worker when it has refilled the reserve. The event is
 * returned, not stored: events are stored last in their transaction, after every row lock (see
 * `insertEvents`).
 */
async function onBlockStarted(
  tx: Queryable,
  gameId: number,
  settings: ReserveSettings,
): Promise<{ enqueueGeneration: boolean; lowReserve: NewEvent | null }> {
  const [game] = await rowsOf<{ partner_id: string; environment: Environment; low_reserve_armed: boolean }>(
    tx,
    sql`
    select partner_id, environment, low_reserve_armed from ${games} where id = ${gameId} for no key update`,
  );
  if (!game) return { enqueueGeneration: false, lowReserve: null };
  const readyBlocks = await readyBlockCount(tx, gameId);
  if (readyBlocks >= settings.minReadyBlocks) return { enqueueGeneration: false, lowReserve: null };
  if (!game.low_reserve_armed) return { enqueueGeneration: true, lowReserve: null };
  await rowsOf(tx, sql`update ${games} set low_reserve_armed = false where id = ${gameId}`);
  const data = {
    gameId,
    readyBlocks,
    minReadyBlocks: settings.minReadyBlocks,
    remainingOutcomes: await remainingOutcomes(tx, gameId),
  };
  return {
    enqueueGeneration: true,
    lowReserve: { partnerId: game.partner_id, environment: game.environment, type: "block.low_reserve", data },
  };
}

export async function readyBlockCount(db: Queryable, gameId: number): Promise<number> {
  const [row] = await rowsOf<{ ready: number }>(
    db,
    sql`
    select count(*)::int as ready from ${blocks} where game_id = ${gameId} and status = 'ready'`,
  );
  return row?.ready ?? 0;
}

/** Outcomes sealed for the game and not yet used by a spin (ready and serving blocks). */
export async function remainingOutcomes(db: Queryable, gameId: number): Promise<number> {
  const [row] = await rowsOf<{ remaining: number }>(
    db,
    sql`
    select (
      coalesce((select sum(size) from ${blocks} where game_id = ${gameId} and status <> 'exhausted'), 0)
      - (select count(*) from ${spinOutcomes} s join ${blocks} b on b.id = s.block_id
         where b.game_id = ${gameId} and b.status <> 'exhausted')
    )::int as remaining`,
  );
  return row?.remaining ?? 0;
}

export interface ReserveFigures {
  readyBlocks: number;
  servingBlocks: number;
  exhaustedBlocks: number;
  remainingOutcomes: number;
  /** Highest sequence sealed so far (0 before the first block). */
  lastSequence: number;
  lowReserveArmed: boolean;
}

export async function reserveFigures(db: Executor, gameId: number): Promise<ReserveFigures> {
  const [row] = await db.execute<{
    ready: number;
    serving: number;
    exhausted: number;
    last_sequence: number;
    armed: boolean;
  }>(sql`
    select count(*) filter (where b.status = 'ready')::int as ready,
           count(*) filter (where b.status = 'serving')::int as serving,
           count(*) filter (where b.status = 'exhausted')::int as exhausted,
           coalesce(max(b.sequence), 0)::int as last_sequence,
           (select low_reserve_armed from ${games} where id = ${gameId}) as armed
    from ${blocks} b where b.game_id = ${gameId}`);
  return {
    readyBlocks: row?.ready ?? 0,
    servingBlocks: row?.serving ?? 0,
    exhaustedBlocks: row?.exhausted ?? 0,
    remainingOutcomes: await remainingOutcomes(db, gameId),
    lastSequence: row?.last_sequence ?? 0,
    lowReserveArmed: row?.armed ?? false,
  };
}

/** Every game with its number of ready blocks (the API's reserve gauge, read at scrape time). */
export async function readyBlocksOfEveryGame(
  db: Executor,
): Promise<{ id: number; partnerId: string; environment: Environment; readyBlocks: number }[]> {
  return db
    .select({
      id: games.id,
      partnerId: games.partnerId,
      environment: games.environment,
      readyBlocks: sql<number>`(count(${blocks.id}) filter (where ${blocks.status} = 'ready'))::int`,
    })
    .from(games)
    .leftJoin(blocks, eq(blocks.gameId, games.id))
    .groupBy(games.id);
}

/** A block's size and the head of its entries, which holds its whole header. */
const SIZE_AND_HEAD = "select size, substring(entries from 1 for $2::int) as head from blocks where id = $1";

/**
 * A sealed block's size and the first `headBytes` of its entries; null when no such block was ever
 * sealed. Read on `client`, prepared (the API keeps the answer: a sealed block never changes).
 */
export async function blockSizeAndHead(
  client: SqlClient,
  blockId: number,
  headBytes: number,
): Promise<{ size: number; head: Buffer } | null> {
  const [row] = await client.unsafe<{ size: number; head: Buffer }[]>(SIZE_AND_HEAD, [blockId, headBytes], {
    prepare: true,
  });
  return row ?? null;
}
