import { parseGameId } from "@outcomes/core";
import { reserveReport } from "@outcomes/reserve";
import type { Command } from "commander";
import { record } from "../output.js";
import type { ActionFactory } from "../program.js";

export function registerGameCommands(program: Command, action: ActionFactory) {
  const games = program.command("games").description("look at games' outcome reserves");

  games
    .command("reserve")
    .description("a game's ready, serving and exhausted blocks and remaining outcomes (unknown: KS-4201)")
    .argument("<gameId>", "the game's gameConfigId")
    .action(
      action(async (ctx, [gameId]) => {
        const id = parseGameId(gameId!, "KS-4201");
        const report = await reserveReport(ctx.db(), await ctx.redis(), ctx.keys, ctx.env, id);
        ctx.print(report, () =>
          record(Object.fromEntries(Object.entries(report).map(([name, value]) => [name, String(value)]))),
        );
      }),
    );
}
