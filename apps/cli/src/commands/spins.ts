import { couldBeId, ErrorCode, ServiceError } from "@outcomes/core";
import { findSpin, REPLAY_LINK_DEFAULT_HOURS, REPLAY_LINK_MAX_HOURS, ReplayLinks } from "@outcomes/db";
import { presentStoredSpin } from "@outcomes/records";
import { type Command, InvalidArgumentError } from "commander";
import { record } from "../output.js";
import type { ActionFactory } from "./command-group.js";

export function registerSpinCommands(program: Command, action: ActionFactory) {
  const spins = program.command("spins").description("look up any partner's spins (game recall)");

  spins
    .command("get")
    .description("a spin of any partner as it was first answered, with its partner and its void (unknown: KS-4215)")
    .argument("<spinId>", "the spin's id (spn_…)")
    .addHelpText(
      "after",
      "\nWhat GET /api/partner/v1/spins/{spinId} shows the spin's partner, plus `partnerId` and `environment`.",
    )
    .action(
      action(async (ctx, [spinId]) => {
        const found = couldBeId(spinId!) ? await findSpin(ctx.db(), spinId!) : null;
        if (!found) throw new ServiceError(ErrorCode.NotFound, { message: "Spin not found" });
        const spin = presentStoredSpin(found, found.externalPlayerId);
        const view = { partnerId: found.spin.partnerId, environment: found.spin.environment, ...spin };
        ctx.print(view, () =>
          record({
            spinId: spin.spinId,
            partnerId: view.partnerId,
            environment: view.environment,
            gameId: String(spin.gameId),
            playerId: spin.playerId,
            wagerUsd: String(spin.wagerUsd),
            prizeTier: spin.outcome.prizeTier,
            multiplier: String(spin.outcome.multiplier),
            payoutUsd: String(spin.outcome.payoutUsd),
            balanceUsd: String(spin.balance.balanceUsd),
            reels: spin.presentation.reelSymbols.map((reel) => reel.join(",")).join(" / "),
            outcome: spin.fairness ? `block ${spin.fairness.blockId}, index ${spin.fairness.index}` : "forced",
            createdAt: spin.createdAt,
            voidedAt: spin.voided?.voidedAt,
            voidReason: spin.voided?.reason,
          }),
        );
      }),
    );

  spins
    .command("replay-link")
    .description("a replay link of any partner's spin: the spin as played, its proof checked in the browser")
    .argument("<spinId>", "the spin's id (spn_…)")
    .option(
      "--hours <n>",
      `how long the link works, 1..${REPLAY_LINK_MAX_HOURS} (default ${REPLAY_LINK_DEFAULT_HOURS})`,
      linkHours,
    )
    .addHelpText(
      "after",
      "\nWhat POST /api/partner/v1/spins/{spinId}/replay-link gives the spin's partner, for support and regulators. The " +
        "URL starts with PUBLIC_BASE_URL; unset, it is the path to add to the deployment's address. Signed with " +
        "REPLAY_SECRETS, or the secret kept in Postgres, as the API does; it opens once `release finish` has run.",
    )
    .action(
      action(async (ctx, [spinId], options) => {
        const found = couldBeId(spinId!) ? await findSpin(ctx.db(), spinId!) : null;
        if (!found) throw new ServiceError(ErrorCode.NotFound, { message: "Spin not found" });
        const links = new ReplayLinks(ctx.db(), ctx.env.REPLAY_SECRETS);
        const link = await links.link(found.spin.id, { baseUrl: ctx.env.PUBLIC_BASE_URL ?? "", hours: options.hours });
        const view = { url: link.url, expiresAt: link.expiresAt.toISOString() };
        ctx.print(view, () => record(view));
      }),
    );
}

function linkHours(text: string): number {
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < 1 || value > REPLAY_LINK_MAX_HOURS) {
    throw new InvalidArgumentError(`a whole number of hours, 1..${REPLAY_LINK_MAX_HOURS}`);
  }
  return value;
}
