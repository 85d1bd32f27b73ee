import { ENVIRONMENTS, requireReportDate, requireSettleableReportDate, ServiceError } from "@outcomes/core";
import {
  generateSettlementReport,
  partnerHasGames,
  presentSettlementReport,
  reissueSettlementReport,
  requirePartner,
  type SettlementReportView,
} from "@outcomes/db";
import { notifyEvents } from "@outcomes/queue";
import { type Command, Option } from "commander";
import type { CliContext } from "../context.js";
import { record } from "../output.js";
import type { ActionFactory } from "../program.js";

const environmentOption = () =>
  new Option("--environment <environment>", "the report's environment").choices(ENVIRONMENTS).makeOptionMandatory();

function printReport(ctx: CliContext, report: SettlementReportView) {
  ctx.print(report, () =>
    record({
      reportDate: report.reportDate,
      status: report.status,
      totalSpins: String(report.totalSpins),
      totalWageredUsd: String(report.totalWageredUsd),
      totalPaidUsd: String(report.totalPaidUsd),
      netUsd: String(report.netUsd),
      rtp: report.rtp === null ? null : String(report.rtp),
      generatedAt: report.generatedAt,
    }),
  );
}

export function registerSettlementCommands(program: Command, action: ActionFactory) {
  const settlements = program
    .command("settlements")
    .description("generate a partner's daily report or reissue a disputed one");

  settlements
    .command("generate")
    .description("generate (or refresh a GENERATED or PENDING) report; acknowledged or disputed: KS-4304")
    .argument("<partnerId>", "the partner's id (ptr_…)")
    .requiredOption("--date <YYYY-MM-DD>", "the UTC day to settle, up to today")
    .addOption(environmentOption())
    .action(
      action(async (ctx, [partnerId], options) => {
        const reportDate = requireSettleableReportDate(options.date, new Date());
        const key = { partnerId: partnerId!, environment: options.environment, reportDate };
        const db = ctx.db();
        await requirePartner(db, key.partnerId);
        if (!(await partnerHasGames(db, key.partnerId, key.environment))) {
          throw new ServiceError("KS-4214", { message: `No games registered for this partner in ${key.environment}` });
        }
        const result = await generateSettlementReport(db, key, "refuse");
        // The event row is committed with the report; this only wakes the dispatcher sooner.
        if (result.outcome === "created" || result.outcome === "updated") await notifyEvents(await ctx.producers());
        printReport(ctx, presentSettlementReport(result.report));
      }),
    );

  settlements
    .command("reissue")
    .description("resolve a dispute: recompute a disputed report, which becomes PENDING")
    .argument("<partnerId>", "the partner's id (ptr_…)")
    .argument("<reportDate>", "the report's UTC day (YYYY-MM-DD)")
    .addOption(environmentOption())
    .action(
      action(async (ctx, [partnerId, date], options) => {
        const key = { partnerId: partnerId!, environment: options.environment, reportDate: requireReportDate(date) };
        await requirePartner(ctx.db(), key.partnerId);
        const report = await reissueSettlementReport(ctx.db(), key);
        await notifyEvents(await ctx.producers());
        printReport(ctx, presentSettlementReport(report));
      }),
    );
}
