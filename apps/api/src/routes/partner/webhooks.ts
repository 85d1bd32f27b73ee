import { createRoute } from "@hono/zod-openapi";
import {
  createRedelivery,
  createWebhook,
  deleteWebhook,
  listDeliveries,
  listWebhooks,
  requireOwnWebhook,
} from "@outcomes/db";
import { enqueueDeliveries } from "@outcomes/queue";
import {
  DeliverySchema,
  presentDelivery,
  presentRegisteredWebhook,
  presentWebhook,
  RegisteredWebhookSchema,
  WebhookSchema,
} from "@outcomes/records";
import {
  errorResponses,
  jsonBody,
  jsonResponse,
  PARTNER_COMMON_ERRORS,
  PageQuery,
  pageFields,
  pageWindow,
} from "../../openapi.js";
import { createRouter } from "../../router.js";
import {
  assertWebhookUrl,
  DeliveryList,
  DeliveryParams,
  RegisterWebhookBody,
  registrationHook,
  WebhookList,
  WebhookParams,
} from "./webhook-schemas.js";

const tags = ["Webhooks"];
const OWNERSHIP_ERRORS = ["KS-4206", "KS-4207"] as const;

export const webhooksRouter = createRouter();

webhooksRouter.openapi(
  createRoute({
    method: "post",
    path: "/webhooks",
    tags,
    summary: "Register a webhook",
    description:
      "The `secret` is returned here only, once. Deliveries are signed with it (X-Service-Signature " +
      "and the Standard Webhooks webhook-signature).",
    request: { body: jsonBody(RegisterWebhookBody) },
    responses: {
      201: jsonResponse(RegisteredWebhookSchema, "The webhook, with its signing secret"),
      ...errorResponses(...PARTNER_COMMON_ERRORS, "KS-4101", "KS-4102", "KS-4106", "KS-4107"),
    },
  }),
  async (c) => {
    const { deps, partner } = c.var;
    const body = c.req.valid("json");
    await assertWebhookUrl(body.url, partner.environment, deps.resolveHost);
    const created = await createWebhook(deps.db, partner, body);
    return c.json(presentRegisteredWebhook(created), 201);
  },
  registrationHook,
);

webhooksRouter.openapi(
  createRoute({
    method: "get",
    path: "/webhooks",
    tags,
    summary: "List webhooks, newest first (deleted ones included, inactive)",
    request: { query: PageQuery },
    responses: {
      200: jsonResponse(WebhookList, "A page of webhooks"),
      ...errorResponses(...PARTNER_COMMON_ERRORS, "KS-4101"),
    },
  }),
  async (c) => {
    const page = c.req.valid("query");
    const result = await listWebhooks(c.var.deps.db, c.var.partner, pageWindow(page));
    return c.json({ webhooks: result.rows.map(presentWebhook), ...pageFields(page, result.total) }, 200);
  },
);

webhooksRouter.openapi(
  createRoute({
    method: "delete",
    path: "/webhooks/{webhookId}",
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

webhooksRouter.openapi(
  createRoute({
    method: "get",
    path: "/webhooks/{webhookId}/deliveries",
    tags,
    summary: "List a webhook's deliveries, newest first",
    request: { params: WebhookParams, query: PageQuery },
    responses: {
      200: jsonResponse(DeliveryList, "A page of deliveries"),
      ...errorResponses(...PARTNER_COMMON_ERRORS, "KS-4101", ...OWNERSHIP_ERRORS),
    },
  }),
  async (c) => {
    const { deps, partner } = c.var;
    const webhook = await requireOwnWebhook(deps.db, partner, c.req.valid("param").webhookId);
    const page = c.req.valid("query");
    const result = await listDeliveries(deps.db, webhook.id, pageWindow(page));
    return c.json({ deliveries: result.rows.map(presentDelivery), ...pageFields(page, result.total) }, 200);
  },
);

webhooksRouter.openapi(
  createRoute({
    method: "post",
    path: "/webhooks/{webhookId}/deliveries/{deliveryId}/redeliver",
    tags,
    summary: "Deliver an event again",
    description:
      "A new delivery (new id, attempts from 1) of the same event with the same body bytes. An unknown " +
      "delivery is 404 KS-4215; a deleted webhook cannot receive anything (400 KS-4101).",
    request: { params: DeliveryParams },
    responses: {
      202: jsonResponse(DeliverySchema, "The new delivery, queued"),
      ...errorResponses(...PARTNER_COMMON_ERRORS, "KS-4101", "KS-4215", ...OWNERSHIP_ERRORS),
    },
  }),
  async (c) => {
    const { deps, partner } = c.var;
    const params = c.req.valid("param");
    const webhook = await requireOwnWebhook(deps.db, partner, params.webhookId);
    const delivery = await createRedelivery(deps.db, webhook, params.deliveryId);
    try {
      await enqueueDeliveries(deps.producers, [delivery.id]);
    } catch (error) {
      // The row is the record: the worker's reconciler queues it if Redis did not take the job.
      deps.logger.warn({ err: error, deliveryId: delivery.id }, "redelivery not queued; the reconciler will");
    }
    return c.json(presentDelivery(delivery), 202);
  },
);
