import { type FillProgress, fillReserve, reserveTargets, UnknownGameError } from "@outcomes/blocks";
import type { JobPayload } from "@outcomes/queue";
import { type Job, UnrecoverableError } from "bullmq";
import type { WorkerContext } from "../context.js";

/**
 * The `blocks.generate` processor. Progress is reported per sealed block (`job.progress` shows
 * blocks sealed and ready against the target) and the totals go to the job's log. An unknown game
 * fails without retries; anything else (Postgres or Redis away) is retried by BullMQ.
 */
export function blocksProcessor(ctx: Pick<WorkerContext, "db" | "redis" | "keys" | "logger" | "env">) {
  const deps = { db: ctx.db, redis: ctx.redis, keys: ctx.keys, logger: ctx.logger, targets: reserveTargets(ctx.env) };
  return async ({ gameId }: JobPayload<"blocks.generate">, job: Job<unknown>): Promise<FillProgress> => {
    try {
      const result = await fillReserve(deps, gameId, (progress) => job.updateProgress({ ...progress }));
      await job.log(summary(result));
      if (result.blocksSealed > 0 || result.rebuiltOutcomes !== null) ctx.logger.info(result, "reserve filled");
      return result;
    } catch (error) {
      if (error instanceof UnknownGameError) throw new UnrecoverableError(error.message);
      throw error;
    }
  };
}

function summary(result: FillProgress): string {
  const parts = [
    `game ${result.gameId}: sealed ${result.blocksSealed} blocks (${result.outcomesSealed} outcomes)`,
    `${result.readyBlocks}/${result.targetReadyBlocks} ready`,
  ];
  if (result.rebuiltOutcomes !== null) parts.push(`list rebuilt from Postgres with ${result.rebuiltOutcomes} outcomes`);
  if (result.appendedOutcomes > 0) parts.push(`${result.appendedOutcomes} sealed outcomes loaded late`);
  return parts.join("; ");
}
