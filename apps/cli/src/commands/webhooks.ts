import { listDisabledWebhooks } from "@outcomes/db";
import { presentOperatorWebhook } from "@outcomes/records";
import type { Command } from "commander";
import { printPage, table } from "../output.js";
import { limitOption, PAGING_HELP, pageOf, pageOption } from "./arguments.js";
import type { ActionFactory } from "./command-group.js";

export function registerWebhookCommands(program: Command, action: ActionFactory) {
  const webhooks = program.command("webhooks").description("look at partners' webhook endpoints");

  webhooks
    .command("disabled")
    .description(
      "list the webhooks the service disabled (failing for WEBHOOK_DISABLE_AFTER_HOURS, or a 410 Gone), most recent first",
    )
    .addOption(pageOption())
    .addOption(limitOption("webhooks"))
    .addHelpText(
      "after",
      `\n${PAGING_HELP}\nIts partner turns one back on with POST /api/partner/v1/webhooks/{webhookId}/enable.\n` +
        "Example:\n  npm run cli -- webhooks disabled --json",
    )
    .action(
      action(async (ctx, _args, options) => {
        const { page, limit, offset } = pageOf(options);
        const result = await listDisabledWebhooks(ctx.db(), { limit, offset });
        const views = result.rows.map(presentOperatorWebhook);
        printPage(ctx, "webhooks", views, { page, limit, total: result.total }, () =>
          table(
            ["id", "partner", "environment", "url", "disabled at", "reason"],
            views.map((w) => [w.id, w.partnerId, w.environment, w.url, w.disabledAt, w.disabledReason]),
          ),
        );
      }),
    );
}
