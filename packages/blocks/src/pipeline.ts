import { type BlockDraft, type DrawnBlock, drawIndependentBlock, type OutcomeDrawer } from "@outcomes/core";
import type { Database } from "@outcomes/db";
import type { GameOwner, RedisClient, RedisKeys } from "@outcomes/queue";
import { appendOutcomes } from "./outcome-list.js";
import { blockRpush, type ItemScratch } from "./rpush.js";
import { reserveBlockIds, type SealedBlock, sealDrawnBlock, sealNextBlock } from "./seal.js";
import { draftOffThread } from "./tree-hasher.js";

export interface BlockRun {
  db: Database;
  redis: RedisClient;
  keys: RedisKeys;
  /** The game (its keys are named by its owner too). */
  game: GameOwner;
  drawer: OutcomeDrawer;
  blockSize: number;
  count: number;
  /** The turn's first block when it was drawn ahead (independent mode), else it is drawn here. */
  first?: DrawnBlock;
  /** Called after each block is in the Redis list, in sequence order. */
  onLoaded: (block: SealedBlock) => Promise<void>;
}

/** Lets queued socket I/O (a sent insert, a finished load) run before more CPU work. */
export const yieldToIo = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Seals `count` blocks, then loads each into the game's list, overlapping the three stages: while
 * Postgres commits block n, block n+1 is drawn, and block n−1 is being loaded into Redis. The order
 * guarantees stay those of one block at a time:
 * - a block is loaded only after its sealing statement committed (the load is chained on the seal);
 * - loads run one after another in sequence order, each only after the previous one succeeded, so
 *   the loaded-through marker never passes a block that is missing from the list;
 * - this returns (and the caller's lock is released) only once every started load has settled,
 *   so no load of this run can race another generator's reconciliation.
 * independent blocks are drawn and hashed ahead of their seal (their tiers do not depend on the
 * record; their ids are reserved first, as every leaf names its block); finite_pool blocks are cut
 * from the stored cycle inside their sealing transaction.
 */
export async function sealAndLoad(run: BlockRun): Promise<void> {
  const independent = run.drawer.sheet.drawMode !== "finite_pool";
  const ids = independent ? await reserveBlockIds(run.db, run.count) : [];
  // Drawn here, its tree built on a tree worker thread while this one goes on.
  const draw = (index: number, drawn?: DrawnBlock): Promise<BlockDraft> => {
    const drafting = draftOffThread(
      run.drawer,
      drawn ?? drawIndependentBlock(run.drawer, run.blockSize),
      ids[index] as number,
    );
    drafting.catch(() => {});
    return drafting;
  };
  const seal = (drafting: Promise<BlockDraft> | null): Promise<SealedBlock> => {
    const sealing = drafting
      ? drafting.then((draft) => sealDrawnBlock(run.db, run.game.id, draft))
      : sealNextBlock(run.db, run.game.id, run.drawer, run.blockSize);
    // Awaited below; observed now so a failure while something else is awaited is not "unhandled".
    sealing.catch(() => {});
    return sealing;
  };
  // Loads run one at a time and ioredis copies a command out when it is sent: one buffer serves
  // every block of the run.
  const scratch: ItemScratch = { bytes: Buffer.alloc(0) };
  let loading: Promise<void> = Promise.resolve();
  let loadFailure = false;
  let sealing = seal(independent ? draw(0, run.first) : null);
  try {
    for (let index = 0; index < run.count && !loadFailure; index++) {
      const last = index + 1 === run.count;
      // The statement goes out before the CPU work below, so Postgres seals while we draw.
      await yieldToIo();
      const following = independent && !last ? draw(index + 1) : null;
      const sealed = await sealing;
      if (!last) {
        sealing = seal(following);
        await yieldToIo();
      }
      loading = loading.then(async () => {
        await appendOutcomes(
          run.redis,
          run.keys,
          run.game,
          [blockRpush(sealed.draft.entries, sealed.blockId, run.keys.outcomeQueue(run.game), { scratch })],
          sealed.sequence,
        );
        await run.onLoaded(sealed);
      });
      // Observed here so a failed load stops sealing more; the error itself is thrown below.
      loading.catch(() => {
        loadFailure = true;
      });
    }
  } finally {
    await Promise.allSettled([sealing, loading]);
  }
  await loading;
}
