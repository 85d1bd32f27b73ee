import { decideParSheet, presentParSheet } from "@outcomes/db";
import type { Command } from "commander";
import type { CliContext } from "../context.js";
import { record } from "../output.js";
import type { ActionFactory } from "../program.js";

async function decide(ctx: CliContext, parSheetId: string, decision: "approve" | "retire") {
  const sheet = await decideParSheet(ctx.db(), parSheetId, decision);
  const view = { ...presentParSheet(sheet), partnerId: sheet.partnerId, environment: sheet.environment };
  ctx.print(view, () =>
    record({
      id: view.id,
      name: view.name,
      version: view.version,
      partnerId: view.partnerId,
      environment: view.environment,
      status: view.status,
      rtp: String(view.rtp),
      approvedAt: view.approvedAt,
      retiredAt: view.retiredAt,
    }),
  );
}

export function registerParSheetCommands(program: Command, action: ActionFactory) {
  const parSheets = program.command("par-sheets").description("approve or retire partners' PAR sheets");

  parSheets
    .command("approve")
    .description("approve a PENDING_APPROVAL sheet (production uploads): games can then be registered from it")
    .argument("<parSheetId>", "the sheet's id (par_…)")
    .action(action(async (ctx, [parSheetId]) => decide(ctx, parSheetId!, "approve")));

  parSheets
    .command("retire")
    .description("retire a sheet: no new game from it (KS-4208); registered games keep running")
    .argument("<parSheetId>", "the sheet's id (par_…)")
    .action(action(async (ctx, [parSheetId]) => decide(ctx, parSheetId!, "retire")));
}
