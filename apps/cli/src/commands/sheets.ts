import { ENVIRONMENTS, PAR_SHEET_STATUSES } from "@outcomes/core";
import { decideParSheet, listParSheetsForOperator } from "@outcomes/db";
import { type OperatorParSheetView, presentOperatorParSheet } from "@outcomes/records";
import { type Command, Option } from "commander";
import type { CliContext } from "../context.js";
import { printPage, record, table } from "../output.js";
import { limitOption, PAGING_HELP, pageOf, pageOption } from "./arguments.js";
import type { ActionFactory } from "./command-group.js";

const sheetRecord = (view: OperatorParSheetView) =>
  record({
    id: view.id,
    name: view.name,
    version: view.version,
    partnerId: view.partnerId,
    environment: view.environment,
    status: view.status,
    rtp: String(view.rtp),
    certifiedRtp: String(view.certifiedRtp),
    approvedAt: view.approvedAt,
    retiredAt: view.retiredAt,
  });

async function decide(ctx: CliContext, parSheetId: string, decision: "approve" | "retire") {
  const view = presentOperatorParSheet(await decideParSheet(ctx.db(), parSheetId, decision));
  ctx.print(view, () => sheetRecord(view));
}

export function registerSheetCommands(program: Command, action: ActionFactory) {
  const sheets = program
    .command("sheets")
    .alias("par-sheets")
    .description("list partners' PAR sheets, approve or retire them");

  sheets
    .command("list")
    .description("list every partner's sheets, newest first")
    .option("--partner <partnerId>", "only this partner's sheets")
    .addOption(new Option("--status <status>", "only sheets in this status").choices(PAR_SHEET_STATUSES))
    .addOption(new Option("--environment <environment>", "only this environment's sheets").choices(ENVIRONMENTS))
    .addOption(pageOption())
    .addOption(limitOption("sheets"))
    .addHelpText(
      "after",
      `\n${PAGING_HELP}\nExample (the approval queue):\n  npm run cli -- sheets list --status PENDING_APPROVAL`,
    )
    .action(
      action(async (ctx, _args, options) => {
        const { page, limit, offset } = pageOf(options);
        const result = await listParSheetsForOperator(
          ctx.db(),
          { partnerId: options.partner, status: options.status, environment: options.environment },
          { limit, offset },
        );
        const views = result.rows.map(presentOperatorParSheet);
        printPage(ctx, "parSheets", views, { page, limit, total: result.total }, () =>
          table(
            ["id", "name", "version", "status", "rtp", "partner", "environment", "created at"],
            views.map((s) => [
              s.id,
              s.name,
              s.version,
              s.status,
              String(s.rtp),
              s.partnerId,
              s.environment,
              s.createdAt,
            ]),
          ),
        );
      }),
    );

  sheets
    .command("approve")
    .description("approve a PENDING_APPROVAL sheet (production uploads): games can then be registered from it")
    .argument("<parSheetId>", "the sheet's id (par_…)")
    .action(action(async (ctx, [parSheetId]) => decide(ctx, parSheetId!, "approve")));

  sheets
    .command("retire")
    .description("retire a sheet: no new game from it (KS-4208); registered games keep running")
    .argument("<parSheetId>", "the sheet's id (par_…)")
    .action(action(async (ctx, [parSheetId]) => decide(ctx, parSheetId!, "retire")));
}
