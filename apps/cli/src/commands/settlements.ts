import { ENVIRONMENTS, requireReportDate, requireSettleableReportDate } from "@outcomes/core";
import {
  listSettlementReports,
  operatorGenerateSettlement,
  operatorReissueSettlement,
  requirePartner,
} from "@outcomes/db";
import { notifyEvents } from "@outcomes/queue";
import { presentSettlementReport, type SettlementReportView } from "@outcomes/records";
import { type Command, Option } from "commander";
import type { CliContext } from "../context.js";
import { printPage, record, table } from "../output.js";
import { limitOption, PAGING_HELP, pageOf, pageOption } from "./arguments.js";
import type { ActionFactory } from "./command-group.js";

const environmentOption = () =>
  new Option("--environment <environment>", "the report's environment").choices(ENVIRONMENTS).makeOptionMandatory();

const rtpText = (rtp: number | null) => (rtp === null ? null : String(rtp));

/** Tables print the exact decimal strings: a JSON number past 2^53 micro-USD would be rounded. */
function printReport(ctx: CliContext, report: SettlementReportView) {
  const { exact } = report;
  ctx.print(report, () =>
    [
      record({
        reportDate: report.reportDate,
        status: report.status,
        provisional: String(report.provisional),
        totalSpins: String(report.totalSpins),
        totalWageredUsd: exact.totalWageredUsd,
        totalPaidUsd: exact.totalPaidUsd,
        voidedSpins: String(report.voidedSpins),
        voidedWageredUsd: exact.voidedWageredUsd,
        voidedPaidUsd: exact.voidedPaidUsd,
        freeRoundSpins: String(report.freeRoundSpins),
        freeRoundWagerUsd: exact.freeRoundWagerUsd,
        netUsd: exact.netUsd,
        rtp: rtpText(report.rtp),
        generatedAt: report.generatedAt,
        disputeReason: report.disputeReason,
      }),
      table(
        [
          "game",
          "spins",
          "wagered usd",
          "paid usd",
          "voids",
          "voided wagered usd",
          "voided paid usd",
          "net usd",
          "rtp",
        ],
        report.games.map((g) => [
          String(g.gameId),
          String(g.totalSpins),
          g.exact.totalWageredUsd,
          g.exact.totalPaidUsd,
          String(g.voidedSpins),
          g.exact.voidedWageredUsd,
          g.exact.voidedPaidUsd,
          g.exact.netUsd,
          rtpText(g.rtp),
        ]),
      ),
    ].join("\n\n"),
  );
}

export function registerSettlementCommands(program: Command, action: ActionFactory) {
  const settlements = program
    .command("settlements")
    .description("list partners' daily reports, generate one now or reissue a disputed one");

  settlements
    .command("generate")
    .description(
      "generate (or refresh) a report; provisional until its UTC day ends; a final acknowledged or disputed one: KS-4304",
    )
    .argument("<partnerId>", "the partner's id (ptr_…)")
    .requiredOption("--report-date <YYYY-MM-DD>", "the UTC day to settle, up to today")
    .addOption(environmentOption())
    .action(
      action(async (ctx, [partnerId], options) => {
        const reportDate = requireSettleableReportDate(options.reportDate, new Date());
        const key = { partnerId: partnerId!, environment: options.environment, reportDate };
        const result = await operatorGenerateSettlement(ctx.db(), key);
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
        const report = await operatorReissueSettlement(ctx.db(), key);
        await notifyEvents(await ctx.producers());
        printReport(ctx, presentSettlementReport(report));
      }),
    );

  settlements
    .command("list")
    .description("list a partner's reports of one environment, newest day first")
    .argument("<partnerId>", "the partner's id (ptr_…)")
    .addOption(environmentOption())
    .addOption(pageOption())
    .addOption(limitOption("reports"))
    .addHelpText("after", `\n${PAGING_HELP}`)
    .action(
      action(async (ctx, [partnerId], options) => {
        const { page, limit, offset } = pageOf(options);
        await requirePartner(ctx.db(), partnerId!);
        const owner = { partnerId: partnerId!, environment: options.environment };
        const result = await listSettlementReports(ctx.db(), owner, { limit, offset });
        const views = result.rows.map(presentSettlementReport);
        printPage(ctx, "reports", views, { page, limit, total: result.total }, () =>
          table(
            [
              "report date",
              "status",
              "spins",
              "wagered usd",
              "paid usd",
              "net usd",
              "rtp",
              "generated at",
              "provisional",
            ],
            views.map((r) => [
              r.reportDate,
              r.status,
              String(r.totalSpins),
              r.exact.totalWageredUsd,
              r.exact.totalPaidUsd,
              r.exact.netUsd,
              rtpText(r.rtp),
              r.generatedAt,
              String(r.provisional),
            ]),
          ),
        );
      }),
    );
}
