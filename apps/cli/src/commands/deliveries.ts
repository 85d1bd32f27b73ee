import { DELIVERY_STATUSES, ErrorCode, ServiceError } from "@outcomes/core";
import {
  type DeliveryFilter,
  listDeliveriesForOperator,
  operatorRedelivery,
  replayFailedDeliveries,
} from "@outcomes/db";
import { enqueueDeliveries } from "@outcomes/queue";
import { type OperatorDeliveryView, presentOperatorDelivery } from "@outcomes/records";
import { type Command, Option } from "commander";
import type { CliContext } from "../context.js";
import { printPage, record, table } from "../output.js";
import { dateTime, limitOption, PAGING_HELP, pageOf, pageOption } from "./arguments.js";
import type { ActionFactory } from "./command-group.js";

/**
 * Hands new deliveries to the `webhooks` worker. The rows are the record: if Redis does not take the
 * jobs, the worker's reconciler queues them, so this warns instead of failing (as the partner API's
 * redeliver does).
 */
async function queueDeliveries(ctx: CliContext, ids: string[]) {
  try {
    await enqueueDeliveries(await ctx.producers(), ids);
  } catch (error) {
    ctx.io.stderr(
      `warning: deliveries not queued (${(error as Error).message}); the webhooks worker's reconciler will\n`,
    );
  }
}

const deliveryRows = (views: OperatorDeliveryView[]) =>
  table(
    ["id", "event", "status", "attempts", "last status", "webhook", "partner", "environment", "created at"],
    views.map((d) => [
      d.id,
      d.event,
      d.status,
      `${d.attempts}/${d.maxAttempts}`,
      d.lastResponseStatus === null ? null : String(d.lastResponseStatus),
      d.webhookId,
      d.partnerId,
      d.environment,
      d.createdAt,
    ]),
  );

export function registerDeliveryCommands(program: Command, action: ActionFactory) {
  const deliveries = program
    .command("deliveries")
    .description("look at webhook deliveries of every partner and replay failed ones");

  deliveries
    .command("list")
    .description("list deliveries, newest first")
    .addOption(new Option("--status <status>", "only deliveries in this status").choices(DELIVERY_STATUSES))
    .option("--partner <partnerId>", "only this partner's webhooks")
    .option("--webhook <webhookId>", "only this webhook")
    .addOption(pageOption())
    .addOption(limitOption("deliveries"))
    .addHelpText("after", `\n${PAGING_HELP}\nExample:\n  npm run cli -- deliveries list --status failed`)
    .action(
      action(async (ctx, _args, options) => {
        const { page, limit, offset } = pageOf(options);
        const filter: DeliveryFilter = {
          status: options.status,
          partnerId: options.partner,
          webhookId: options.webhook,
        };
        const result = await listDeliveriesForOperator(ctx.db(), filter, { limit, offset });
        const views = result.rows.map(presentOperatorDelivery);
        printPage(ctx, "deliveries", views, { page, limit, total: result.total }, () => deliveryRows(views));
      }),
    );

  deliveries
    .command("replay")
    .description("deliver an event again: a new delivery (new id, attempts from 1) with the same body")
    .argument("[deliveryId]", "the delivery to repeat (dlv_…); or use --failed")
    .option("--failed", "replay every failed delivery to an active webhook not replayed yet")
    .option("--since <date-time>", "with --failed: only deliveries that failed at or after this instant", dateTime)
    .option("--webhook <webhookId>", "with --failed: only this webhook")
    .option("--partner <partnerId>", "with --failed: only this partner's webhooks")
    .addHelpText(
      "after",
      "\nOne delivery is replayed every time you ask (as the partner API's redeliver). --failed replays each\n" +
        "failed delivery at most once: one that already has a replay is skipped, so re-running it is safe.\n" +
        "Examples:\n  npm run cli -- deliveries replay dlv_0Qx7kLm2AbCd\n" +
        "  npm run cli -- deliveries replay --failed --since 2026-05-01T09:00:00Z",
    )
    .action(
      action(async (ctx, [deliveryId], options) => {
        if (Boolean(deliveryId) === Boolean(options.failed)) {
          throw new ServiceError(ErrorCode.InvalidRequest, { message: "Give either a delivery id or --failed" });
        }
        if (deliveryId && (options.since || options.webhook || options.partner)) {
          throw new ServiceError(ErrorCode.InvalidRequest, {
            message: "--since, --webhook and --partner go with --failed",
          });
        }
        if (deliveryId) {
          const view = presentOperatorDelivery(await operatorRedelivery(ctx.db(), deliveryId));
          await queueDeliveries(ctx, [view.id]);
          ctx.print(
            view,
            () =>
              `Delivery ${deliveryId} replayed as ${view.id}.\n${record({ id: view.id, event: view.event, status: view.status, webhookId: view.webhookId, partnerId: view.partnerId, environment: view.environment, redeliveryOf: view.redeliveryOf })}`,
          );
          return;
        }
        const result = await replayFailedDeliveries(ctx.db(), {
          since: options.since,
          webhookId: options.webhook,
          partnerId: options.partner,
        });
        const views = result.replayed.map(presentOperatorDelivery);
        await queueDeliveries(
          ctx,
          views.map((view) => view.id),
        );
        ctx.print({ deliveries: views, replayed: views.length, more: result.more }, () =>
          [
            `${views.length} failed deliver${views.length === 1 ? "y" : "ies"} replayed.`,
            ...(views.length > 0
              ? [
                  table(
                    ["new id", "replay of", "event", "webhook", "partner"],
                    views.map((v) => [v.id, v.redeliveryOf, v.event, v.webhookId, v.partnerId]),
                  ),
                ]
              : []),
            ...(result.more ? ["More remain: run the command again to replay the next ones."] : []),
          ].join("\n"),
        );
      }),
    );
}
