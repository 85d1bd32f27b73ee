import type { RoleStarter } from "../context.js";
import { startQueueWorker } from "../queue-worker.js";
import { blocksProcessor } from "./process.js";

/** Games refilled in parallel per process; jobs of one game serialise on its row lock anyway. */
const CONCURRENCY = 2;

/**
 * The `blocks` role: processes `blocks.generate {gameId}` on the `blocks` queue, filling the game's
 * reserve to TARGET_READY_BLOCKS (see @outcomes/blocks). Any number of these may run.
 */
export const startBlocksRole: RoleStarter = async (ctx) =>
  startQueueWorker(
    "blocks",
    { "blocks.generate": blocksProcessor(ctx) },
    { ...ctx, concurrency: CONCURRENCY, logFailures: true },
  );
