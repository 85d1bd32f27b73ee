import { blockQueueItemWriter } from "@outcomes/core";
import { blocks, type Database, type Executor, games, poolCycles, spinOutcomes } from "@outcomes/db";
import { eachApart, PartialFailure } from "@outcomes/runtime";
import { sql } from "drizzle-orm";
import { endLostBlocks } from "./lost-entries.js";
import { RETIRE_AFTER_MS, RETIRE_SETTLE_MS, RETIRED_MARKER_TTL_MS, type RevealDeps } from "./retirement.js";
import { lockGame } from "./seal.js";

export { RETIRE_AFTER_MS, RETIRE_SETTLE_MS, type RevealDeps } from "./retirement.js";

export interface RevealSweep {
  /** Blocks found with every entry served or retired (the public `exhausted`). */
  closedBlocks: number;
  /**
   * Blocks whose last index was lost in flight (a later block is being served): marked exhausted,
   * to be retired like any other (lost-entries.ts).
   */
  lostBlocks: number;
  /** Entries of those blocks that no spin used. */
  retiredOutcomes: number;
  /** Seeds shown: independent blocks, and finite_pool cycles whose every block is closed. */
  revealedBlocks: number;
  revealedCycles: number;
  /** Blocks waiting for stragglers or for their unused entries to be retired. */
  waitingBlocks: number;
  /** Blocks whose step failed (logged each); the others went on, and the sweep then fails to run again. */
  failedBlocks: number;
}

type Candidate = {
  id: string;
  game_id: number;
  partner_id: string;
  environment: string;
  size: number;
  cycle: number;
  exhausted_ms: number;
  spent: number;
};

/**
 * The reveal sweep (the `blocks.reveal` job, every few seconds): a block whose last index was
 * taken is closed once every entry is used by a spin, or, RETIRE_AFTER_MS later, once its unused
 * entries are retired (retireUnused). A block whose last index was lost in flight is first marked
 * exhausted (endLostBlocks). Closing an independent block reveals its seed; a finite_pool cycle's
 * seed is revealed when every block of the cycle is cut and closed. Blocks sealed before provable
 * fairness (no seed) are never closed here. Any number of sweeps may run at once: each block is
 * closed, and each seed revealed, by one of them.
 */
export async function revealExhaustedBlocks(deps: RevealDeps, now = Date.now()): Promise<RevealSweep> {
  const lost = await endLostBlocks(deps, now);
  const sweep: RevealSweep = {
    closedBlocks: 0,
    lostBlocks: lost.endedBlocks,
    failedBlocks: lost.failedBlocks,
    retiredOutcomes: 0,
    revealedBlocks: 0,
    revealedCycles: 0,
    waitingBlocks: lost.waitingBlocks,
  };
  // bigint ids come back from postgres.js as strings.
  const candidates = await deps.db.execute<Candidate>(sql`
    select b.id, b.game_id, g.partner_id, g.environment, b.size, b.cycle,
      (extract(epoch from b.exhausted_at) * 1000)::float8 as exhausted_ms,
      (select count(*) from ${spinOutcomes} o where o.block_id = b.id)::int as spent
    from ${blocks} b join ${games} g on g.id = b.game_id
    where b.status = 'exhausted' and b.closed_at is null and b.seed_hash is not null`);
  const spent: Candidate[] = [];
  const retiredBlocks: Candidate[] = [];
  const retiring = candidates.filter((block) => {
    if (block.spent >= block.size) spent.push(block);
    else if (now - block.exhausted_ms < RETIRE_AFTER_MS) sweep.waitingBlocks++;
    else return true;
    return false;
  });
  const { failed } = await eachApart(
    retiring,
    async (block) => {
      const retired = await retireUnused(deps, block, now);
      if (retired === "waiting") sweep.waitingBlocks++;
      else if (retired !== "closed already") {
        sweep.retiredOutcomes += retired;
        retiredBlocks.push(block);
      }
    },
    (block, error) =>
      deps.logger.error({ err: error, blockId: block.id, gameId: block.game_id }, "block retirement failed"),
  );
  sweep.failedBlocks += failed;
  const spentClosed = new Set(
    spent.length > 0
      ? await closeBlocks(
          deps.db,
          spent.map((block) => block.id),
        )
      : [],
  );
  const closed = [...spent.filter((block) => spentClosed.has(block.id)), ...retiredBlocks];
  sweep.closedBlocks = closed.length;
  sweep.revealedBlocks = closed.filter((block) => block.cycle === 0).length;
  const cycles = closed.filter((block) => block.cycle > 0);
  if (cycles.length > 0) {
    const revealed = await revealCompleteCycles(deps.db, cycles);
    sweep.revealedCycles = revealed.cycles;
    sweep.revealedBlocks += revealed.blocks;
  }
  if (sweep.lostBlocks > 0) deps.logger.warn(sweep, "blocks whose last outcomes were lost in flight marked exhausted");
  if (sweep.retiredOutcomes > 0) deps.logger.warn(sweep, "retired unused outcomes of exhausted blocks");
  if (sweep.failedBlocks > 0)
    throw new PartialFailure("blocks of the reveal sweep", sweep.failedBlocks, candidates.length);
  return sweep;
}

/**
 * Every entry served or retired: closed, and an independent block's seed shown with it. Answers
 * the ids it closed (not those another sweep closed first).
 */
async function closeBlocks(db: Executor, ids: string[]): Promise<string[]> {
  const closed = await db.execute<{ id: string }>(sql`
    update ${blocks} set closed_at = now(), revealed_at = case when seed is not null then now() end
    where id in (${sql.join(
      ids.map((id) => sql`${id}`),
      sql`, `,
    )}) and closed_at is null
    returning id`);
  return closed.map((row) => String(row.id));
}

/** The cycles of these blocks whose every entry is in a closed block: seeds shown, on every block of theirs. */
async function revealCompleteCycles(db: Database, touched: Candidate[]): Promise<{ cycles: number; blocks: number }> {
  const keys = sql.join(
    touched.map((block) => sql`(${block.game_id}::int, ${block.cycle}::int)`),
    sql`, `,
  );
  const [row] = await db.execute<{ cycles: number; blocks: number }>(sql`
    with complete as (
      update ${poolCycles} c set revealed_at = now()
      where (c.game_id, c.cycle) in (${keys}) and c.revealed_at is null and c.seed is not null
        and octet_length(c.tiers) = (
          select coalesce(sum(b.size), 0) from ${blocks} b
          where b.game_id = c.game_id and b.cycle = c.cycle and b.closed_at is not null)
      returning c.game_id, c.cycle
    ), shown as (
      update ${blocks} b set revealed_at = now() from complete
      where b.game_id = complete.game_id and b.cycle = complete.cycle
      returning b.id
    )
    select (select count(*) from complete)::int as cycles, (select count(*) from shown)::int as blocks`);
  return { cycles: row?.cycles ?? 0, blocks: row?.blocks ?? 0 };
}

/**
 * Retires the entries of an exhausted block that no spin used, in two sweeps under the game's lock
 * (so no queue rebuild runs in between): the first sets the block's retirement marker, which makes
 * the spin path drop rather than give back any of its entries, and removes them from the queue;
 * a sweep RETIRE_SETTLE_MS later removes them again (a spin in flight may have given one back
 * before the marker), closes the block and answers how many were retired. "waiting" while that wait
 * lasts; "closed already" when another sweep closed it first.
 */
async function retireUnused(
  deps: RevealDeps,
  block: Candidate,
  now: number,
): Promise<number | "waiting" | "closed already"> {
  const blockId = Number(block.id);
  return deps.db.transaction(async (lock) => {
    // FOR UPDATE, before the game (block rows come before games, as in the spin path): waits for
    // the spins that hold the block's key-share lock, whose outcomes are then read as used below,
    // and holds back any later one until the close has committed; that one then finds the block
    // closed and takes the next outcome (see recordSpins).
    await lock.execute(sql`select id from ${blocks} where id = ${block.id} for update`);
    await lockGame(lock, block.game_id);
    // Named by the game's owner: the same hash tag as the game's list (docs/redis-cluster.md).
    const game = { id: block.game_id, partnerId: block.partner_id, environment: block.environment };
    const marker = deps.keys.outcomesRetired(game, blockId);
    const markedAt = await deps.redis.get(marker);
    const [stored] = await lock.execute<{ entries: Buffer }>(sql`select entries from ${blocks} where id = ${block.id}`);
    const used = await lock.execute<{ index: number }>(sql`
      select outcome_index as index from ${spinOutcomes} where block_id = ${block.id}`);
    if (!stored) throw new Error(`block ${blockId} is missing`);
    const spent = new Set(used.map((row) => row.index));
    const items = blockQueueItemWriter(stored.entries, blockId);
    const scratch = Buffer.allocUnsafe(items.maxItemBytes);
    const tx = deps.redis.multi();
    if (markedAt === null) tx.set(marker, String(now), "PX", RETIRED_MARKER_TTL_MS);
    let unused = 0;
    for (let index = 0; index < items.size; index++) {
      if (spent.has(index)) continue;
      unused++;
      tx.lrem(deps.keys.outcomeQueue(game), 0, Buffer.from(scratch.subarray(0, items.write(index, scratch, 0))));
    }
    const results = await tx.exec();
    for (const [error] of results ?? []) if (error) throw error;
    if (markedAt === null || now - Number(markedAt) < RETIRE_SETTLE_MS) return "waiting";
    // Closed under the lock: a rebuild, which skips closed blocks, cannot queue them again meanwhile.
    const closed = await closeBlocks(lock, [block.id]);
    return closed.length > 0 ? unused : "closed already";
  });
}
