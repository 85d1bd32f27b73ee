import { createRoute, z } from "@hono/zod-openapi";
import { ErrorCode } from "@outcomes/core";
import {
  createRedelivery,
  createWebhook,
  deleteWebhook,
  listDeliveries,
  listWebhooks,
  requestRecovery,
  requireOwnWebhook,
  rotateWebhookSecret,
} from "@outcomes/db";
import { enqueueDeliveries, enqueueRecovery } from "@outcomes/queue";
import {
  DeliverySchema,
  presentDelivery,
  presentRegisteredWebhook,
  presentWebhook,
  RegisteredWebhookSchema,
  TimestampSchema,
  WebhookSchema,
} from "@outcomes/records";
import type { AppDeps } from "../../context.js";
import { errorResponses, jsonBody, jsonResponse, optionalJsonBody, PARTNER_COMMON_ERRORS } from "../../openapi.js";
import { createRouter } from "../../router.js";
import { pagedListRoute } from "../paged-list.js";
import {
  assertWebhookUrl,
  DeliveryParams,
  RegisterWebhookBody,
  registrationHook,
  WebhookParams,
} from "./webhook-schemas.js";

const tags = ["Webhooks"];
const OWNERSHIP_ERRORS = [ErrorCode.WebhookNotFound, ErrorCode.WebhookNotOwned] as const;

const DAY_MS = 86_400_000;
const RECOVER_WINDOW_DAYS = 30;
/** A `since` exactly 30 days back, computed on a client whose clock runs a little behind, still counts. */
const RECOVER_CLOCK_SKEW_MS = 60_000;

const RecoverBody = z
  .strictObject({
    since: z.iso
      .datetime({ offset: true })
      .refine(
        (text) => Date.parse(text) >= Date.now() - RECOVER_WINDOW_DAYS * DAY_MS - RECOVER_CLOCK_SKEW_MS,
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

const MAX_OVERLAP_SECONDS = 604_800;
const DEFAULT_OVERLAP_SECONDS = 86_400;

const RotateSecretBody = z
  .strictObject({
    overlapSeconds: z
      .number()
      .int()
      .min(0)
      .max(MAX_OVERLAP_SECONDS)
      .optional()
      .openapi({
        example: DEFAULT_OVERLAP_SECONDS,
        description: `How long deliveries stay signed with the old secret too (default ${DEFAULT_OVERLAP_SECONDS}, at most ${MAX_OVERLAP_SECONDS})`,
      }),
  })
  .openapi("RotateWebhookSecret");

const RotatedSecret = z
  .object({
    webhookId: z.string(),
    secret: z.string().openapi({
      example: "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oDsRxDRyXnQxk=",
      description: "The new signing secret; shown only in this response",
    }),
    previousSecretExpiresAt: TimestampSchema.openapi({
      description: "Until then webhook-signature also carries a signature with the old secret",
    }),
  })
  .openapi("RotatedWebhookSecret");

export const webhooksRouter = createRouter();

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

webhooksRouter.openapi(
  createRoute({
    method: "post",
    path: "/webhooks",
    operationId: "registerWebhook",
    tags,
    summary: "Register a webhook",
    description:
      "The `secret` is returned here only, once. Deliveries are signed with it (X-Service-Signature " +
      "and the Standard Webhooks webhook-signature).",
    request: {
      body: jsonBody(RegisterWebhookBody, {
        url: "https://hooks.example.com/outcomes",
        events: ["spin.large_win", "settlement.report_ready"],
      }),
    },
    responses: {
      201: jsonResponse(RegisteredWebhookSchema, "The webhook, with its signing secret"),
      ...errorResponses(
        ...PARTNER_COMMON_ERRORS,
        ErrorCode.InvalidRequest,
        ErrorCode.RequiredFieldMissing,
        ErrorCode.InvalidWebhookUrl,
        ErrorCode.InvalidWebhookEvents,
      ),
    },
  }),
  async (c) => {
    const { deps, partner } = c.var;
    const body = c.req.valid("json");
    await assertWebhookUrl(body.url, partner.environment, deps.resolveHost, deps.env.SANDBOX_LOOPBACK_PORTS);
    const created = await createWebhook(deps.db, partner, body);
    return c.json(presentRegisteredWebhook(created), 201);
  },
  registrationHook,
);

pagedListRoute(webhooksRouter, {
  path: "/webhooks",
  operationId: "listWebhooks",
  tags,
  summary: "List webhooks, newest first (deleted ones included, inactive)",
  schema: { name: "WebhookList", key: "webhooks", item: WebhookSchema },
  description: "A page of webhooks",
  common: PARTNER_COMMON_ERRORS,
  list: (c, _params, window) => listWebhooks(c.var.deps.db, c.var.partner, window),
  present: presentWebhook,
});

webhooksRouter.openapi(
  createRoute({
    method: "delete",
    path: "/webhooks/{webhookId}",
    operationId: "deleteWebhook",
    tags,
    summary: "Delete a webhook (soft: kept for audit, receives nothing more; repeating is harmless)",
    request: { params: WebhookParams },
    responses: {
      200: jsonResponse(WebhookSchema, "The webhook, now inactive"),
      ...errorResponses(...PARTNER_COMMON_ERRORS, ...OWNERSHIP_ERRORS),
    },
  }),
  async (c) => {
    const deleted = await deleteWebhook(c.var.deps.db, c.var.partner, c.req.valid("param").webhookId);
    return c.json(presentWebhook(deleted), 200);
  },
);

pagedListRoute(webhooksRouter, {
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

webhooksRouter.openapi(
  createRoute({
    method: "post",
    path: "/webhooks/{webhookId}/deliveries/{deliveryId}/redeliver",
    operationId: "redeliverWebhookDelivery",
    tags,
    summary: "Deliver an event again",
    description:
      "A new delivery (new id, attempts from 1) of the same event with the same body bytes. An unknown " +
      "delivery is 404 KS-4215; a deleted webhook cannot receive anything (400 KS-4101).",
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

webhooksRouter.openapi(
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
      "first did not). A deleted webhook is 404 KS-4206; deleting the webhook stops a running recover.",
    request: { params: WebhookParams, body: jsonBody(RecoverBody, recoverExample) },
    responses: {
      202: jsonResponse(Recovery, "How many failed deliveries will be delivered again"),
      ...errorResponses(
        ...PARTNER_COMMON_ERRORS,
        ErrorCode.InvalidRequest,
        ErrorCode.RequiredFieldMissing,
        ...OWNERSHIP_ERRORS,
      ),
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

webhooksRouter.openapi(
  createRoute({
    method: "post",
    path: "/webhooks/{webhookId}/rotate-secret",
    operationId: "rotateWebhookSecret",
    tags,
    summary: "Rotate the signing secret, with an overlap",
    description:
      "A new secret, shown only here. Until `previousSecretExpiresAt` every attempt (retries of earlier " +
      "deliveries too) carries both signatures in webhook-signature (`v1,<new> v1,<old>`), so a receiver " +
      "holding either secret verifies it; X-Service-Signature is signed with the new one. Rotating again " +
      "within the overlap retires the oldest secret at once. A deleted webhook is 404 KS-4206.",
    request: {
      params: WebhookParams,
      body: optionalJsonBody(RotateSecretBody, { overlapSeconds: DEFAULT_OVERLAP_SECONDS }),
    },
    responses: {
      200: jsonResponse(RotatedSecret, "The new secret"),
      ...errorResponses(
        ...PARTNER_COMMON_ERRORS,
        ErrorCode.InvalidRequest,
        ErrorCode.RequiredFieldMissing,
        ...OWNERSHIP_ERRORS,
      ),
    },
  }),
  async (c) => {
    const { deps, partner } = c.var;
    const overlapSeconds = c.req.valid("json").overlapSeconds ?? DEFAULT_OVERLAP_SECONDS;
    const rotated = await rotateWebhookSecret(deps.db, partner, c.req.valid("param").webhookId, overlapSeconds);
    return c.json(
      {
        webhookId: rotated.id,
        secret: rotated.secret,
        previousSecretExpiresAt: rotated.previousSecretExpiresAt!.toISOString(),
      },
      200,
    );
  },
);
