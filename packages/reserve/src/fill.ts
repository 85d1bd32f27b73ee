import { assertValidParSheet, OutcomeDrawer, type ParSheetAnalysis, queuedItemsText } from "@outcomes/core";
import { type Database, readyBlockCount } from "@outcomes/db";
import type { RedisKeys } from "@outcomes/queue";
import { countBlockGenerated, type Logger } from "@outcomes/runtime";
import type { Redis } from "ioredis";
import { appendOutcomes } from "./outcome-list.js";
import { reconcileOutcomeList } from "./recovery.js";
import { armLowReserve, lockGame, sealNextBlock } from "./seal.js";

export interface ReserveTargets {
  blockSize: number;
  minReadyBlocks: number;
  targetReadyBlocks: number;
}

export interface ReserveDeps {
  db: Database;
  redis: Redis;
  keys: RedisKeys;
  logger: Logger;
  targets: ReserveTargets;
}

export interface FillProgress {
  gameId: number;
  blocksSealed: number;
  outcomesSealed: number;
  readyBlocks: number;
  targetReadyBlocks: number;
  /** Outcomes reloaded into a lost Redis list from Postgres (null: the list was not lost). */
  rebuiltOutcomes: number | null;
  /** Outcomes of sealed blocks loaded late (a previous generator died between seal and load). */
  appendedOutcomes: number;
}

/** The game does not exist: retrying cannot help. */
export class UnknownGameError extends Error {
  constructor(readonly gameId: number) {
    super(`game ${gameId} does not exist`);
    this.name = "UnknownGameError";
  }
}

export function reserveTargets(env: {
  BLOCK_SIZE: number;
  MIN_READY_BLOCKS: number;
  TARGET_READY_BLOCKS: number;
}): ReserveTargets {
  return {
    blockSize: env.BLOCK_SIZE,
    minReadyBlocks: env.MIN_READY_BLOCKS,
    targetReadyBlocks: env.TARGET_READY_BLOCKS,
  };
}

/**
 * Fills the game's reserve to TARGET_READY_BLOCKS ready blocks. One block per turn, each turn under
 * the game's Postgres row lock: reconcile the Redis list with the record (rebuild a lost list, load
 * blocks sealed but never loaded), count ready blocks, then seal the next block in its own committed
 * transaction and load it into the list in one script. Two generators of one game take turns and
 * never seal the same sequence or load out of order; the spin path waits at most one block's
 * generation for its block-start bookkeeping. Reaching the target re-arms `block.low_reserve`.
 */
export async function fillReserve(
  deps: ReserveDeps,
  gameId: number,
  onProgress?: (progress: FillProgress) => Promise<void>,
): Promise<FillProgress> {
  const target = Math.max(deps.targets.targetReadyBlocks, deps.targets.minReadyBlocks);
  const progress: FillProgress = {
    gameId,
    blocksSealed: 0,
    outcomesSealed: 0,
    readyBlocks: 0,
    targetReadyBlocks: target,
    rebuiltOutcomes: null,
    appendedOutcomes: 0,
  };
  // The sheet is checked and compiled once per job, at its first block.
  let drawing: { sheet: ParSheetAnalysis; drawer: OutcomeDrawer } | undefined;
  for (;;) {
    const done = await deps.db.transaction(async (lock) => {
      const game = await lockGame(lock, gameId);
      if (!game) throw new UnknownGameError(gameId);
      const reconciled = await reconcileOutcomeList(deps.db, deps.redis, deps.keys, gameId);
      if (reconciled.rebuiltOutcomes !== null) {
        progress.rebuiltOutcomes = (progress.rebuiltOutcomes ?? 0) + reconciled.rebuiltOutcomes;
        deps.logger.warn(
          { gameId, outcomes: reconciled.rebuiltOutcomes },
          "outcome list was lost: rebuilt from Postgres",
        );
      }
      if (reconciled.appendedOutcomes > 0) {
        progress.appendedOutcomes += reconciled.appendedOutcomes;
        deps.logger.warn(
          { gameId, outcomes: reconciled.appendedOutcomes },
          "loaded sealed blocks missing from the list",
        );
      }
      progress.readyBlocks = await readyBlockCount(lock, gameId);
      if (progress.readyBlocks >= target) {
        if (!game.lowReserveArmed) await armLowReserve(lock, gameId);
        return true;
      }
      if (!drawing) {
        const sheet = assertValidParSheet(game.document);
        drawing = { sheet, drawer: new OutcomeDrawer(sheet) };
      }
      const sealed = await sealNextBlock(deps.db, gameId, drawing.sheet, drawing.drawer, deps.targets.blockSize);
      await appendOutcomes(
        deps.redis,
        deps.keys,
        gameId,
        queuedItemsText(sealed.draft, sealed.blockId),
        sealed.sequence,
      );
      progress.blocksSealed++;
      progress.outcomesSealed += sealed.draft.size;
      countBlockGenerated(gameId, sealed.draft.size);
      progress.readyBlocks++;
      return false;
    });
    await onProgress?.({ ...progress });
    if (done) return progress;
  }
}
