import { lockGame, sealNextBlock } from "@outcomes/blocks";
import {
  assertValidParSheet,
  codecOfBlockHead,
  newId,
  OutcomeDrawer,
  parseQueueItem,
  presentationOf,
  type QueuedOutcome,
  queueItemOutcome,
} from "@outcomes/core";
import {
  type BlockProgress,
  blocks,
  insertEvents,
  markBlockProgress,
  players,
  spinOutcomes,
  spins,
} from "@outcomes/db";
import type { Job } from "bullmq";
import { eq, sql } from "drizzle-orm";
import type { TestApi } from "./api.js";

/**
 * A stand-in for the BullMQ job handed to the processor: it records progress and log lines the way
 * the dashboard shows them, so a test can run the processor directly, in-process.
 */
export function recordingJob() {
  const progress: unknown[] = [];
  const logs: string[] = [];
  const job = {
    updateProgress: async (value: unknown) => {
      progress.push(value);
    },
    log: async (line: string) => {
      logs.push(line);
      return logs.length;
    },
  } as unknown as Job;
  return { job, progress, logs };
}

/**
 * Serves `count` outcomes the way the spin path does: LPOP, then one transaction writing the spin
 * row and the block bookkeeping. Returns each spin's bookkeeping result.
 */
export async function serveOutcomes(
  api: TestApi,
  game: { gameId: number; partnerId: string },
  count: number,
): Promise<BlockProgress[]> {
  const { db } = api.database;
  const [player] = await db
    .insert(players)
    .values({ partnerId: game.partnerId, environment: "sandbox", externalId: newId("plr") })
    .returning({ id: players.id });
  const results: BlockProgress[] = [];
  const queue = api.deps.keys.outcomeQueue(await api.gameOwner(game.gameId));
  for (let served = 0; served < count; served++) {
    const item = await api.deps.redis.lpop(queue);
    if (item === null) throw new Error(`the queue ran out after ${served} outcomes`);
    const outcome = await outcomeOfItem(api, item);
    results.push(
      await db.transaction(async (tx) => {
        const id = newId("spn");
        await tx.insert(spinOutcomes).values({ blockId: outcome.blockId, outcomeIndex: outcome.index, spinId: id });
        await tx.insert(spins).values({
          id,
          partnerId: game.partnerId,
          environment: "sandbox",
          gameId: game.gameId,
          playerId: player!.id,
          blockId: outcome.blockId,
          outcomeIndex: outcome.index,
          prizeTier: outcome.tier,
          multiplierMillionths: outcome.multiplierMillionths,
          wagerMicros: 1_000_000,
          payoutMicros: outcome.multiplierMillionths,
          balanceAfterMicros: 0,
          presentation: presentationOf(outcome),
        });
        const progress = await markBlockProgress(tx, outcome, { minReadyBlocks: api.deps.env.MIN_READY_BLOCKS });
        if (progress.lowReserve) await insertEvents(tx, [progress.lowReserve]);
        return progress;
      }),
    );
  }
  return results;
}

/** A queue item's outcome, read with its block's codec from the record as the spin path does. */
export async function outcomeOfItem(api: TestApi, raw: string): Promise<QueuedOutcome> {
  const item = parseQueueItem(raw);
  const [block] = await api.database.db
    .select({ entries: blocks.entries })
    .from(blocks)
    .where(eq(blocks.id, item.blockId));
  if (!block) throw new Error(`queue item of unknown block ${item.blockId}`);
  return { ...queueItemOutcome(item, codecOfBlockHead(block.entries)), blockId: item.blockId, index: item.index };
}

/**
 * A revealed independent block of `size` entries without serving it: the game's next block is drawn
 * and sealed as the blocks worker does (`sealNextBlock`, under the game's lock) but not queued, then
 * recorded as the reveal sweep leaves a block whose entries were all used or retired: exhausted,
 * closed, its seed shown. The `served` indexes get a `spin_outcomes` row each (the record of which
 * spin used an entry; the spin ids are made up, no spin row is written); the others count as retired.
 * Serving a block of BLOCK_SIZE's maximum (1,000,000) spin by spin would take hours; this takes seconds.
 */
export async function sealRevealedBlock(
  api: TestApi,
  gameId: number,
  size: number,
  served: readonly number[] = [],
): Promise<{ blockId: number; spinIds: Map<number, string> }> {
  const { db } = api.database;
  const { blockId } = await db.transaction(async (lock) => {
    const game = await lockGame(lock, gameId);
    if (!game) throw new Error(`game ${gameId} does not exist`);
    const drawer = new OutcomeDrawer(assertValidParSheet(game.document));
    if (drawer.sheet.drawMode === "finite_pool") throw new Error("sealRevealedBlock makes independent blocks only");
    return sealNextBlock(db, gameId, drawer, size);
  });
  const spinIds = new Map(served.map((index) => [index, newId("spn")]));
  if (spinIds.size > 0) {
    await db
      .insert(spinOutcomes)
      .values([...spinIds].map(([outcomeIndex, spinId]) => ({ blockId, outcomeIndex, spinId })));
  }
  await db
    .update(blocks)
    .set({
      status: "exhausted",
      startedAt: sql`now()`,
      exhaustedAt: sql`now()`,
      closedAt: sql`now()`,
      revealedAt: sql`now()`,
    })
    .where(eq(blocks.id, blockId));
  return { blockId, spinIds };
}
