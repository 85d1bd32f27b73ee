import { ENVIRONMENTS, ErrorCode, ServiceError } from "@outcomes/core";
import { listFreeRoundGrantsForOperator, lookUpFreeRoundGrant } from "@outcomes/db";
import { presentOperatorFreeRoundGrant } from "@outcomes/records";
import { type Command, Option } from "commander";
import { printPage, record, table } from "../output.js";
import { limitOption, PAGING_HELP, pageOf, pageOption } from "./arguments.js";
import type { ActionFactory } from "./command-group.js";

export function registerFreeRoundCommands(program: Command, action: ActionFactory) {
  const freeRounds = program
    .command("free-rounds")
    .description("look up partners' free-round grants (to help a partner with a promotion)");

  freeRounds
    .command("list")
    .description("list a partner's grants, newest first, each with its status as of now")
    .requiredOption("--partner <partnerId>", "the partner whose grants to list")
    .addOption(new Option("--environment <environment>", "only this environment's grants").choices(ENVIRONMENTS))
    .addOption(pageOption())
    .addOption(limitOption("grants"))
    .addHelpText("after", `\n${PAGING_HELP}\nExample:\n  npm run cli -- free-rounds list --partner ptr_0Qx7kLm2AbCd`)
    .action(
      action(async (ctx, _args, options) => {
        const { page, limit, offset } = pageOf(options);
        const result = await listFreeRoundGrantsForOperator(
          ctx.db(),
          { partnerId: options.partner, environment: options.environment },
          { limit, offset },
        );
        const views = result.rows.map(presentOperatorFreeRoundGrant);
        printPage(ctx, "freeRounds", views, { page, limit, total: result.total }, () =>
          table(
            ["id", "game", "wager usd", "rounds", "players", "status", "expires at", "environment", "created at"],
            views.map((grant) => [
              grant.freeRoundsId,
              String(grant.gameId),
              String(grant.wagerUsd),
              String(grant.rounds),
              String(grant.playerCount),
              grant.status,
              grant.expiresAt,
              grant.environment,
              grant.createdAt,
            ]),
          ),
        );
      }),
    );

  freeRounds
    .command("get")
    .description("a grant of any partner with its partner and environment (unknown: KS-4219)")
    .argument("<freeRoundsId>", "the grant's id (fr_…)")
    .addHelpText(
      "after",
      "\nWhat GET /api/partner/v1/free-rounds/{freeRoundsId} shows the grant's partner, plus `partnerId` and `environment`.",
    )
    .action(
      action(async (ctx, [freeRoundsId]) => {
        const found = await lookUpFreeRoundGrant(ctx.db(), freeRoundsId!);
        if (!found) throw new ServiceError(ErrorCode.FreeRoundsNotFound);
        const view = presentOperatorFreeRoundGrant(found);
        ctx.print(view, () =>
          record({
            freeRoundsId: view.freeRoundsId,
            partnerId: view.partnerId,
            environment: view.environment,
            gameId: String(view.gameId),
            wagerUsd: String(view.wagerUsd),
            rounds: String(view.rounds),
            playerCount: String(view.playerCount),
            status: view.status,
            expiresAt: view.expiresAt,
            createdAt: view.createdAt,
            cancelledAt: view.cancelledAt,
          }),
        );
      }),
    );
}
