import { Worker } from "bullmq";
import type { RoleStarter } from "../context.js";
import { jobLockOptions } from "../job-lock.js";
import { blocksProcessor } from "./process.js";

/** Games refilled in parallel per process; jobs of one game serialise on its row lock anyway. */
const CONCURRENCY = 2;

/**
 * The `blocks` role: processes `blocks.generate {gameId}` on the `blocks` queue, filling the game's
 * reserve to TARGET_READY_BLOCKS (see @outcomes/blocks). Any number of these may run.
 */
export const startBlocksRole: RoleStarter = async (ctx) => {
  const connection = ctx.newConnection();
  const worker = new Worker("blocks", blocksProcessor(ctx), {
    connection,
    prefix: ctx.bullPrefix,
    concurrency: CONCURRENCY,
    ...jobLockOptions(ctx.env),
  });
  worker.on("error", (error) => ctx.logger.error({ err: error }, "blocks worker error"));
  worker.on("failed", (job, error) =>
    ctx.logger.error({ err: error, jobId: job?.id, gameId: job?.data?.gameId }, "blocks.generate failed"),
  );
  return {
    close: async () => {
      await worker.close();
      await connection.quit();
    },
  };
};
