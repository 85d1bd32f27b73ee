import { couldBeId, ErrorCode, ServiceError } from "@outcomes/core";
import { findSpin } from "@outcomes/db";
import { presentStoredSpin } from "@outcomes/records";
import type { Command } from "commander";
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
}
