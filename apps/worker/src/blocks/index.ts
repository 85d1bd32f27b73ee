import { revealExhaustedBlocks, treeHashing } from "@outcomes/blocks";
import type { RoleStarter } from "../context.js";
import { upsertJobSchedule } from "../job-schedules.js";
import { startQueueWorker } from "../queue-worker.js";
import { blocksProcessor } from "./process.js";

/** Games refilled in parallel per process; jobs of one game serialise on its row lock anyway. */
const CONCURRENCY = 2;
/** The reveal sweep's scheduler: one per deployment, whichever worker upserts it. */
export const REVEAL_SCHEDULER_ID = "blocks.reveal";
/** How soon after its last spin a block's seed is shown, at most (plus the sweep's own time). */
export const REVEAL_EVERY_MS = 2_000;

/**
 * The `blocks` role: processes `blocks.generate {gameId}` on the `blocks` queue, filling the game's
 * reserve to TARGET_READY_BLOCKS (see @outcomes/blocks), and the `blocks.reveal` sweep its
 * scheduler queues every REVEAL_EVERY_MS, which closes exhausted blocks and shows their seeds
 * (docs/fairness.md). Any number of these may run.
 */
export const startBlocksRole: RoleStarter = async (ctx) => {
  if (treeHashing.reason) ctx.logger.warn(treeHashing, "Merkle trees hashed without the native batch hasher (slower)");
  else ctx.logger.info(treeHashing, "Merkle trees hashed in native batches");
  await upsertJobSchedule(ctx.producers, REVEAL_SCHEDULER_ID, "blocks.reveal", { every: REVEAL_EVERY_MS });
  return startQueueWorker(
    "blocks",
    {
      "blocks.generate": blocksProcessor(ctx),
      "blocks.reveal": async () => {
        const sweep = await revealExhaustedBlocks(ctx);
        if (sweep.closedBlocks > 0) ctx.logger.info(sweep, "blocks closed and seeds revealed");
        return sweep;
      },
    },
    { ...ctx, concurrency: CONCURRENCY, logFailures: true },
  );
};
