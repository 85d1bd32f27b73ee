import { readMaintenanceFlag, writeMaintenanceFlag } from "@outcomes/queue";
import type { Command } from "commander";
import type { CliContext } from "../context.js";
import type { ActionFactory } from "./command-group.js";

async function setMaintenance(ctx: CliContext, enabled: boolean) {
  const redis = await ctx.redis();
  await writeMaintenanceFlag(redis, ctx.keys, enabled);
  await ctx.announce("maintenance");
  printState(ctx, enabled);
}

function printState(ctx: CliContext, enabled: boolean) {
  ctx.print({ enabled }, () =>
    enabled
      ? "Maintenance mode is ON: partner calls answer 503 KS-5002 (Retry-After: 60)."
      : "Maintenance mode is off: partner calls are served.",
  );
}

export function registerMaintenanceCommands(program: Command, action: ActionFactory) {
  const maintenance = program
    .command("maintenance")
    .description("turn maintenance mode on or off (every API process follows within 1 s)");

  maintenance
    .command("on")
    .description("partner calls answer 503 KS-5002; the operator API, health and metrics stay up")
    .action(action(async (ctx) => setMaintenance(ctx, true)));

  maintenance
    .command("off")
    .description("serve partner calls again")
    .action(action(async (ctx) => setMaintenance(ctx, false)));

  maintenance
    .command("status")
    .description("show whether maintenance mode is on")
    .action(action(async (ctx) => printState(ctx, await readMaintenanceFlag(await ctx.redis(), ctx.keys))));
}
