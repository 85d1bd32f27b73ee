import { reserveReport } from "@outcomes/blocks/report";
import { ErrorCode, parseGameId } from "@outcomes/core";
import { enqueueGeneration } from "@outcomes/queue";
import type { Command } from "commander";
import type { CliContext } from "../context.js";
import { record } from "../output.js";
import type { ActionFactory } from "./command-group.js";

async function report(ctx: CliContext, gameId: number) {
  return reserveReport(ctx.db(), await ctx.redis(), ctx.keys, ctx.env, gameId);
}

const reportText = (figures: Record<string, unknown>) =>
  record(Object.fromEntries(Object.entries(figures).map(([name, value]) => [name, String(value)])));

export function registerGameCommands(program: Command, action: ActionFactory) {
  const games = program.command("games").description("look at games' outcome reserves and refill them");

  games
    .command("reserve")
    .description("a game's ready, serving and exhausted blocks and remaining outcomes (unknown: KS-4201)")
    .argument("<gameId>", "the game's gameConfigId")
    .addHelpText("after", "\nThe figures of GET /api/admin/v1/games/{gameId}/reserve, from the same settings.")
    .action(
      action(async (ctx, [gameId]) => {
        const figures = await report(ctx, parseGameId(gameId!, ErrorCode.GameNotFound));
        ctx.print(figures, () => reportText({ ...figures }));
      }),
    );

  games
    .command("refill")
    .description("ask the blocks worker to generate blocks up to TARGET_READY_BLOCKS now (unknown: KS-4201)")
    .argument("<gameId>", "the game's gameConfigId")
    .addHelpText(
      "after",
      "\nQueues blocks.generate, de-duplicated per game as every other trigger is: asking twice makes one job.\n" +
        "A reserve already at target is left as it is. Watch it with `games reserve <gameId>`.",
    )
    .action(
      action(async (ctx, [gameId]) => {
        const id = parseGameId(gameId!, ErrorCode.GameNotFound);
        // Read first: an unknown game is refused (KS-4201) before a job the worker would only drop.
        const figures = await report(ctx, id);
        const jobId = await enqueueGeneration(await ctx.producers(), id);
        ctx.print(
          { jobId, reserve: figures },
          () => `Queued blocks.generate (job ${jobId}). The reserve when asked:\n${reportText({ ...figures })}`,
        );
      }),
    );
}
