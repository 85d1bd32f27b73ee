import { assertValidParSheet, OutcomeDrawer } from "@outcomes/core";
import { type Database, readyBlockCount } from "@outcomes/db";
import type { RedisClient, RedisKeys } from "@outcomes/queue";
import { countBlockGenerated, type Logger } from "@outcomes/runtime";
import { headStart, sealAndLoad, yieldToIo } from "./pipeline.js";
import { reconcileOutcomeList } from "./recovery.js";
import { armLowReserve, lockGame, reserveBlockIds } from "./seal.js";

/**
 * Outcomes one turn (one hold of the game's lock) generates at most: about 0.1 s of work, the
 * longest a spin starting a block or a PATCH of the game waits. A TARGET fill at the default sizes
 * (4 × 10,000) is one turn; at least one block per turn whatever BLOCK_SIZE is.
 */
const OUTCOMES_PER_TURN = 100_000;
const blocksPerTurn = (blockSize: number) => Math.max(1, Math.floor(OUTCOMES_PER_TURN / blockSize));

export interface ReserveTargets {
  blockSize: number;
  minReadyBlocks: number;
  targetReadyBlocks: number;
}

export interface ReserveDeps {
  db: Database;
  redis: RedisClient;
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
 * Fills the game's reserve to TARGET_READY_BLOCKS ready blocks, in turns, each under the game's
 * Postgres row lock: reconcile the Redis list with the record (rebuild a lost list, load blocks
 * sealed but never loaded), count ready blocks, then seal the missing blocks (up to
 * OUTCOMES_PER_TURN), each committed before it is loaded into the list in one MULTI/EXEC, drawing,
 * sealing and loading overlapped (pipeline.ts). Two generators of one game take turns and never
 * seal the same sequence or load out of order; the spin path waits at most one turn for its
 * block-start bookkeeping. Reaching the target re-arms `block.low_reserve`.
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
  let drawer: OutcomeDrawer | undefined;
  for (;;) {
    const done = await deps.db.transaction(async (lock) => {
      const game = await lockGame(lock, gameId);
      if (!game) throw new UnknownGameError(gameId);
      // Reconciling (Redis, the pool) and counting (this connection) change nothing the other reads;
      // the sheet compiles while both are in flight.
      const reconciling = reconcileOutcomeList(deps.db, deps.redis, deps.keys, game);
      const counting = readyBlockCount(lock, gameId);
      // A disarmed game (new, or its reserve dropped) is about to be filled: the turn's block ids are
      // reserved and its first block drawn while the counts are in flight, and the first tree is
      // built as soon as its id is known (wasted only if another generator filled it meanwhile; so
      // block ids are not dense).
      const independent = (game.document as { drawMode?: unknown }).drawMode !== "finite_pool";
      const reserving =
        !game.lowReserveArmed && independent
          ? reserveBlockIds(deps.db, Math.min(target, blocksPerTurn(deps.targets.blockSize)))
          : undefined;
      reserving?.catch(() => {});
      // postgres.js sends small queries from a setImmediate: two turns of the loop put them on the
      // wire before the CPU work below.
      await yieldToIo();
      await yieldToIo();
      drawer ??= new OutcomeDrawer(assertValidParSheet(game.document));
      const ahead = reserving && headStart(drawer, deps.targets.blockSize, reserving);
      const [reconciled, ready] = await Promise.all([reconciling, counting]);
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
      progress.readyBlocks = ready;
      if (progress.readyBlocks >= target) {
        if (!game.lowReserveArmed) await armLowReserve(lock, gameId);
        await onProgress?.({ ...progress });
        return true;
      }
      const count = Math.min(target - progress.readyBlocks, blocksPerTurn(deps.targets.blockSize));
      // Block starts take this lock too, so the count stays exact: a turn that seals the missing
      // blocks completes the fill, and re-arms while they are sealed (undone if the turn fails).
      const completes = progress.readyBlocks + count >= target;
      const arming = completes && !game.lowReserveArmed ? armLowReserve(lock, gameId) : Promise.resolve();
      const sealing = sealAndLoad({
        db: deps.db,
        redis: deps.redis,
        keys: deps.keys,
        game,
        drawer,
        blockSize: deps.targets.blockSize,
        count,
        ahead: await ahead,
        onLoaded: async (sealed) => {
          progress.blocksSealed++;
          progress.outcomesSealed += sealed.draft.size;
          progress.readyBlocks++;
          countBlockGenerated(gameId, sealed.draft.size);
          await onProgress?.({ ...progress });
        },
      });
      // Both settle before the lock can be released: no load of this turn outlives it.
      for (const result of await Promise.allSettled([sealing, arming])) {
        if (result.status === "rejected") throw result.reason;
      }
      return completes;
    });
    if (done) return progress;
  }
}
