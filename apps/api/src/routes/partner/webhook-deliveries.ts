import { createRoute, z } from "@hono/zod-openapi";
import { ErrorCode } from "@outcomes/core";
import { createRedelivery, listDeliveries, requestRecovery, requireOwnWebhook } from "@outcomes/db";
import { enqueueDeliveries, enqueueRecovery } from "@outcomes/queue";
import { DeliverySchema, presentDelivery } from "@outcomes/records";
import type { AppDeps } from "../../context.js";
import { errorResponses, jsonBody, jsonResponse, PARTNER_COMMON_ERRORS } from "../../openapi.js";
import { createRouter } from "../../router.js";
import { pagedListRoute } from "../paged-list.js";
import {
  DeliveryParams,
  WEBHOOK_OWNERSHIP_ERRORS as OWNERSHIP_ERRORS,
  WEBHOOK_COMMAND_ERRORS,
  WebhookParams,
} from "./webhook-schemas.js";

/** A webhook's deliveries: the list, a redelivery, and recover after an outage (CONTRACT §4, §11). */

const tags = ["Webhooks"];

const DAY_MS = 86_400_000;
const RECOVER_WINDOW_DAYS = 30;
/** A `since` exactly 30 days back, computed on a client whose clock runs a little behind, still counts. */
const RECOVER_CLOCK_SKEW_MS = 60_000;

const RecoverBody = z
  .strictObject({
    since: z.iso
      .datetime({ offset: true })
      .refine(
        // A text that is no date at all is named once, by the format check (NaN passes here).
        (text) => !(Date.parse(text) < Date.now() - RECOVER_WINDOW_DAYS * DAY_MS - RECOVER_CLOCK_SKEW_MS),
        `must be at most ${RECOVER_WINDOW_DAYS} days back`,
      )
      .openapi({
        format: "date-time",
        description: `ISO 8601 with a time zone, at most ${RECOVER_WINDOW_DAYS} days back (a minute of clock skew allowed)`,
      }),
  })
  .openapi("RecoverWebhook");

/**
 * The start of the previous UTC day: a getter, read each time the document is serialized, so the example the
 * reference sends stays within the window however long the process runs.
 */
const recoverExample = {
  get since() {
    const yesterday = new Date(Date.now() - DAY_MS).toISOString().slice(0, 10);
    return `${yesterday}T00:00:00Z`;
  },
};

const Recovery = z
  .object({
    recovered: z.number().int().openapi({
      description: "Failed deliveries counted for a new delivery; the worker makes them after the answer",
      example: 12,
    }),
  })
  .openapi("WebhookRecovery");

export const webhookDeliveriesRouter = createRouter();

/** After the commit. The rows are the record: the worker's reconciler queues them if Redis did not take the jobs. */
async function queueNewDeliveries(deps: AppDeps, deliveryIds: string[]): Promise<void> {
  try {
    await enqueueDeliveries(deps.producers, deliveryIds);
  } catch (error) {
    deps.logger.warn({ err: error, deliveries: deliveryIds.length }, "deliveries not queued; the reconciler will");
  }
}

/** After the commit, likewise: the recovery's row is the record, and the reconciler queues its job if this did not. */
async function queueRecovery(deps: AppDeps, recoveryId: string): Promise<void> {
  try {
    await enqueueRecovery(deps.producers, recoveryId);
  } catch (error) {
    deps.logger.warn({ err: error, recoveryId }, "recovery not queued; the reconciler will");
  }
}

pagedListRoute(webhookDeliveriesRouter, {
  path: "/webhooks/{webhookId}/deliveries",
  operationId: "listWebhookDeliveries",
  tags,
  summary: "List a webhook's deliveries, newest first",
  params: WebhookParams,
  schema: { name: "WebhookDeliveryList", key: "deliveries", item: DeliverySchema },
  description: "A page of deliveries",
  common: PARTNER_COMMON_ERRORS,
  errors: [...OWNERSHIP_ERRORS],
  list: async (c, params, window) => {
    // Ownership on the primary (the webhook may be new); the deliveries are a listing.
    const webhook = await requireOwnWebhook(c.var.deps.db, c.var.partner, params.webhookId);
    return listDeliveries(c.var.deps.readDb, webhook.id, window);
  },
  present: presentDelivery,
});

webhookDeliveriesRouter.openapi(
  createRoute({
    method: "post",
    path: "/webhooks/{webhookId}/deliveries/{deliveryId}/redeliver",
    operationId: "redeliverWebhookDelivery",
    tags,
    summary: "Deliver an event again",
    description:
      "A new delivery (new id, attempts from 1) of the same event with the same body bytes. An unknown " +
      "delivery is 404 KS-4215; a deleted or disabled webhook cannot receive anything (400 KS-4101).",
    request: { params: DeliveryParams },
    responses: {
      202: jsonResponse(DeliverySchema, "The new delivery, queued"),
      ...errorResponses(...PARTNER_COMMON_ERRORS, ErrorCode.InvalidRequest, ErrorCode.NotFound, ...OWNERSHIP_ERRORS),
    },
  }),
  async (c) => {
    const { deps, partner } = c.var;
    const params = c.req.valid("param");
    const webhook = await requireOwnWebhook(deps.db, partner, params.webhookId);
    const delivery = await createRedelivery(deps.db, webhook, params.deliveryId);
    await queueNewDeliveries(deps, [delivery.id]);
    return c.json(presentDelivery(delivery), 202);
  },
);

webhookDeliveriesRouter.openapi(
  createRoute({
    method: "post",
    path: "/webhooks/{webhookId}/recover",
    operationId: "recoverWebhookDeliveries",
    tags,
    summary: "Deliver again every event whose delivery failed since a given time",
    description:
      "Each delivery of this webhook that ended `failed` and was created at or after `since` gets a new " +
      "delivery of the same event (same event id and body bytes, a new delivery id, attempts from 1). The " +
      "answer comes at once and counts them; a worker then makes the new deliveries, a few thousand per " +
      "transaction, and queues each, so a long outage's backlog takes seconds to minutes to appear in the " +
      "deliveries list. Deliveries that fail after this call are not included: call it again for them. A " +
      "failed delivery already delivered again (by an earlier recover, a redeliver or an operator's " +
      "replay), or left to an earlier recover still running, is not counted and gets nothing more, so " +
      "calling this twice, even at once, sends nothing twice (the second answer counts only what the " +
      "first did not). A deleted webhook is 404 KS-4206; a disabled one 400 KS-4101 until it is enabled; deleting or disabling the webhook stops a running recover.",
    request: { params: WebhookParams, body: jsonBody(RecoverBody, recoverExample) },
    responses: {
      202: jsonResponse(Recovery, "How many failed deliveries will be delivered again"),
      ...errorResponses(...WEBHOOK_COMMAND_ERRORS),
    },
  }),
  async (c) => {
    const { deps, partner } = c.var;
    const { webhookId } = c.req.valid("param");
    const since = new Date(c.req.valid("json").since);
    const { recoveryId, counted } = await requestRecovery(deps.db, partner, webhookId, since);
    if (recoveryId) await queueRecovery(deps, recoveryId);
    return c.json({ recovered: counted }, 202);
  },
);
