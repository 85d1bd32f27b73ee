import { requireSettleableReportDate } from "@outcomes/core";
import { runKeyExpiryNow, runPartitionMaintenanceNow, runSettlementsNow } from "@outcomes/queue";
import type { Command } from "commander";
import type { ActionFactory } from "./command-group.js";

export function registerJobCommands(program: Command, action: ActionFactory) {
  const jobs = program.command("jobs").description("scheduled jobs");
  const run = jobs
    .command("run")
    .description("run a scheduled job now: queues the job its scheduler queues (the workers pick it up)");

  run
    .command("settlements")
    .description("queue the daily settlement run for every partner and environment with registered games")
    .option("--report-date <YYYY-MM-DD>", "the UTC day to settle, up to today (default: the previous UTC day)")
    .addHelpText("after", "\nAcknowledged and disputed reports are left unchanged. Progress: /admin/queues.")
    .action(
      action(async (ctx, _args, options) => {
        const reportDate =
          options.reportDate === undefined ? undefined : requireSettleableReportDate(options.reportDate, new Date());
        const jobId = await runSettlementsNow(await ctx.producers(), reportDate);
        ctx.print({ jobId }, () => `Queued settlement.generate (job ${jobId}).`);
      }),
    );

  run
    .command("key-expiry")
    .description("queue the api_key.expiring notice sweep (each threshold is notified once, however often it runs)")
    .action(
      action(async (ctx) => {
        const jobId = await runKeyExpiryNow(await ctx.producers());
        ctx.print({ jobId }, () => `Queued key-expiry.sweep (job ${jobId}).`);
      }),
    );

  run
    .command("partitions")
    .description(
      "queue the partition maintenance (run by the key-expiry role every hour): make the partitions of spins, " +
        "events and idempotency records 7 days ahead, drop the idempotency records' expired days",
    )
    .action(
      action(async (ctx) => {
        const jobId = await runPartitionMaintenanceNow(await ctx.producers());
        ctx.print({ jobId }, () => `Queued partitions.maintain (job ${jobId}).`);
      }),
    );
}
