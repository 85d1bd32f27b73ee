import { requireSettleableReportDate } from "@outcomes/core";
import { runKeyExpiryNow, runSettlementsNow } from "@outcomes/queue";
import type { Command } from "commander";
import type { ActionFactory } from "../program.js";

export function registerJobCommands(program: Command, action: ActionFactory) {
  const jobs = program.command("jobs").description("run a scheduled job now (the workers pick it up)");

  jobs
    .command("settlements")
    .description("queue the daily settlement run for every partner and environment with registered games")
    .option("--date <YYYY-MM-DD>", "the UTC day to settle (default: the previous UTC day)")
    .action(
      action(async (ctx, _args, options) => {
        const reportDate =
          options.date === undefined ? undefined : requireSettleableReportDate(options.date, new Date());
        const jobId = await runSettlementsNow(await ctx.producers(), reportDate);
        ctx.print({ jobId }, () => `Queued settlement.generate (job ${jobId}).`);
      }),
    );

  jobs
    .command("key-expiry")
    .description("queue the api_key.expiring notice sweep")
    .action(
      action(async (ctx) => {
        const jobId = await runKeyExpiryNow(await ctx.producers());
        ctx.print({ jobId }, () => `Queued key-expiry.sweep (job ${jobId}).`);
      }),
    );
}
