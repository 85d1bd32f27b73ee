import { CURRENT_RELEASE } from "@outcomes/core";
import { finishRollout, type RolloutState, rolloutState } from "@outcomes/db";
import type { Command } from "commander";
import type { CliContext } from "../context.js";
import type { ActionFactory } from "./command-group.js";

function printState(ctx: CliContext, state: RolloutState) {
  const finishedAt = state.finishedAt?.toISOString() ?? null;
  ctx.print({ release: state.release, rolloutFinished: finishedAt !== null, finishedAt }, () =>
    finishedAt
      ? `Release ${state.release}: rollout finished at ${finishedAt}.`
      : `Release ${state.release}: rollout not finished (features the previous release cannot read are off).`,
  );
}

export function registerReleaseCommands(program: Command, action: ActionFactory) {
  const release = program.command("release").description("this release's rolling upgrade (docs/upgrades.md)");

  release
    .command("status")
    .description("show this release and whether its rollout has finished")
    .action(action(async (ctx) => printState(ctx, await rolloutState(ctx.db(), CURRENT_RELEASE))));

  release
    .command("finish")
    .description(
      "the rollout's last step, once no process of the previous release runs: turns on the features the " +
        "previous release cannot read (every process follows within 1 s); repeating it changes nothing",
    )
    .action(
      action(async (ctx) => {
        const state = await finishRollout(ctx.db(), CURRENT_RELEASE);
        await ctx.announce("rollout");
        printState(ctx, state);
      }),
    );
}
