import { type BlockDraft, drawIndependentBlock, type OutcomeDrawer } from "@outcomes/core";
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
  /** independent: the turn's block ids and first block, when reserved and drawn ahead (`headStart`). */
  ahead?: HeadStart;
  /** Called after each block is in the Redis list, in sequence order. */
  onLoaded: (block: SealedBlock) => Promise<void>;
}

/** A turn's block ids, reserved ahead (at least `count`), and its first block, its tree being built. */
export interface HeadStart {
  ids: readonly number[];
  draft: Promise<BlockDraft>;
}

/**
 * Draws an independent block now and has its tree built as soon as `reserving` gives the turn's
 * block ids (the first is its id), while the turn's counts are still in flight.
 */
export function headStart(drawer: OutcomeDrawer, blockSize: number, reserving: Promise<number[]>): Promise<HeadStart> {
  const drawn = drawIndependentBlock(drawer, blockSize);
  const ahead = reserving.then((ids) => {
    const draft = draftOffThread(drawer, drawn, ids[0] as number);
    draft.catch(() => {});
    return { ids, draft };
  });
  ahead.catch(() => {});
  return ahead;
}

/** Lets queued socket I/O (a sent insert, a finished load) run before more CPU work. */
export const yieldToIo = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * independent blocks drawn (their trees posted to the tree threads) beyond the one being sealed: the
 * tree threads then always hold the next trees, so a seal never waits for its tree.
 */
const DRAW_AHEAD = 2;

/**
 * Seals `count` blocks, then loads each into the game's list, overlapping the stages: while
 * Postgres commits block n, the trees of the next blocks are built on the tree threads, block n's
 * RESP command is written, and block n−1 is being loaded into Redis. The order guarantees stay those
 * of one block at a time:
 * - a block is loaded only after its sealing statement committed (the load is chained on the seal);
 * - loads run one after another in sequence order, each only after the previous one succeeded, so
 *   the loaded-through marker never passes a block that is missing from the list;
 * - this returns (and the caller's lock is released) only once every started seal, tree and load
 *   has settled, so no load of this run can race another generator's reconciliation.
 * independent blocks are drawn and hashed ahead of their seal (their tiers do not depend on the
 * record; their ids are reserved first, as every leaf names its block); finite_pool blocks are cut
 * from the stored cycle inside their sealing transaction.
 */
export async function sealAndLoad(run: BlockRun): Promise<void> {
  const independent = run.drawer.sheet.drawMode !== "finite_pool";
  const ids = run.ahead?.ids ?? (independent ? await reserveBlockIds(run.db, run.count) : []);
  // independent: drawn here, in order, up to `end`; each tree is built on a tree thread meanwhile.
  const drafts: Promise<BlockDraft>[] = [];
  const drawUpTo = (end: number) => {
    while (independent && drafts.length < Math.min(end, run.count)) {
      const index = drafts.length;
      if (index === 0 && run.ahead) {
        drafts.push(run.ahead.draft);
        continue;
      }
      const drafting = draftOffThread(
        run.drawer,
        drawIndependentBlock(run.drawer, run.blockSize),
        ids[index] as number,
      );
      // Awaited by its seal; observed now so a failure while something else is awaited is not "unhandled".
      drafting.catch(() => {});
      drafts.push(drafting);
    }
  };
  const seal = (index: number): Promise<SealedBlock> => {
    const sealing = independent
      ? (drafts[index] as Promise<BlockDraft>).then((draft) => sealDrawnBlock(run.db, run.game.id, draft))
      : sealNextBlock(run.db, run.game.id, run.drawer, run.blockSize);
    sealing.catch(() => {});
    return sealing;
  };
  // A block's command is written while Postgres seals it (independent: once its tree is back;
  // finite_pool: once sealed) and Redis still loads the previous block, into one of two
  // buffers taken in turn: the one of block n − 2, whose load has settled by then (ioredis is done
  // with a command's buffer once its reply is in).
  const buffers: ItemScratch[] = [{ bytes: Buffer.alloc(0) }, { bytes: Buffer.alloc(0) }];
  const loads: Promise<void>[] = [];
  let loading: Promise<void> = Promise.resolve();
  let loadFailure = false;
  drawUpTo(1 + DRAW_AHEAD);
  let sealing = seal(0);
  try {
    for (let index = 0; index < run.count && !loadFailure; index++) {
      // The statement goes out before the CPU work below, so Postgres seals while we draw.
      await yieldToIo();
      drawUpTo(index + 2 + DRAW_AHEAD);
      await loads[index - 2]?.catch(() => {});
      if (loadFailure) break;
      const list = run.keys.outcomeQueue(run.game);
      const scratch = buffers[index % 2];
      // independent: its tree (which its seal waits for too) is back before its command is written.
      const drafted = independent ? await drafts[index] : undefined;
      const written = drafted && blockRpush(drafted.entries, drafted.blockId, list, { scratch });
      const sealed = await sealing;
      if (index + 1 < run.count) {
        sealing = seal(index + 1);
        await yieldToIo();
      }
      const command = written ?? blockRpush(sealed.draft.entries, sealed.blockId, list, { scratch });
      loading = loading.then(async () => {
        await appendOutcomes(run.redis, run.keys, run.game, [command], sealed.sequence);
        await run.onLoaded(sealed);
      });
      loads[index] = loading;
      // Observed here so a failed load stops sealing more; the error itself is thrown below.
      loading.catch(() => {
        loadFailure = true;
      });
    }
  } finally {
    await Promise.allSettled([sealing, loading, ...drafts]);
  }
  await loading;
}
