import { createRoute } from "@hono/zod-openapi";
import { ErrorCode } from "@outcomes/core";
import { createWebhook, deleteWebhook, enableWebhook, listWebhooks, updateWebhook } from "@outcomes/db";
import { presentRegisteredWebhook, presentWebhook, RegisteredWebhookSchema, WebhookSchema } from "@outcomes/records";
import { keyedRequest } from "../../idempotency.js";
import { gated } from "../../middleware/gated.js";
import { errorResponses, jsonBody, jsonResponse, PARTNER_COMMON_ERRORS } from "../../openapi.js";
import { createRouter } from "../../router.js";
import { createKeyOf, gatedKeyHeader, markReplay } from "../keyed-create.js";
import { pagedListRoute } from "../paged-list.js";
import {
  assertWebhookUrl,
  WEBHOOK_OWNERSHIP_ERRORS as OWNERSHIP_ERRORS,
  RegisterWebhookBody,
  refuseUnreleasedFields,
  registrationHook,
  UpdateWebhookBody,
  WEBHOOK_COMMAND_ERRORS,
  WebhookParams,
} from "./webhook-schemas.js";

/** Webhooks themselves: register, list, update, delete, enable (CONTRACT §4, §18). */

const tags = ["Webhooks"];

export const webhooksRouter = createRouter();

webhooksRouter.openapi(
  createRoute({
    method: "post",
    path: "/webhooks",
    operationId: "registerWebhook",
    tags,
    summary: "Register a webhook",
    description:
      "The `secret` is returned here only, once. Deliveries are signed with it (X-Service-Signature " +
      "and the Standard Webhooks webhook-signature). `rateLimitPerSecond` and the `webhook.disabled` event " +
      "type are available once release 3's rollout has finished (before: 400 KS-4101 / KS-4107). With " +
      "`Idempotency-Key` (kept 24 h per partner and environment; once release 3's rollout has finished) a repeat " +
      "of the same body answers the first webhook, its secret included (`Idempotent-Replayed: true`), and " +
      "registers nothing more; another body with the key is KS-4101.",
    request: {
      headers: gatedKeyHeader("webhook"),
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
    const key = await createKeyOf(c, "webhook", "keyed-creates");
    const created = await deps.creates.createOnce({
      // The webhook as understood: its events as a set, so their order does not make another request.
      key: keyedRequest(partner, key, {
        route: "POST /webhooks",
        url: body.url,
        events: [...body.events].sort().join(","),
        rateLimitPerSecond: body.rateLimitPerSecond ?? "none",
      }),
      admit: async () => {
        await refuseUnreleasedFields(deps, body);
        await assertWebhookUrl(body.url, partner.environment, deps.resolveHost, deps.env.SANDBOX_LOOPBACK_PORTS);
        return (tx) => createWebhook(tx, partner, body);
      },
      present: presentRegisteredWebhook,
      replay: (stored) => RegisteredWebhookSchema.parse(stored),
    });
    markReplay(c, created);
    return c.json(created.body, 201);
  },
  registrationHook,
);

pagedListRoute(webhooksRouter, {
  path: "/webhooks",
  operationId: "listWebhooks",
  tags,
  summary: "List webhooks, newest first (deleted and disabled ones included, inactive)",
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

webhooksRouter.openapi(
  createRoute({
    method: "patch",
    path: "/webhooks/{webhookId}",
    operationId: "updateWebhook",
    tags,
    summary: "Update a webhook's pacing",
    description:
      "Only the fields sent change: `rateLimitPerSecond` 1..1000, or null to stop pacing (deliveries already " +
      "waiting keep the turn they were given). To change the URL or the events, register a new webhook and " +
      "delete this one. A deleted webhook is 404 KS-4206. Available once release 3's rollout has finished.",
    middleware: [gated("webhook-endpoint-health")],
    request: { params: WebhookParams, body: jsonBody(UpdateWebhookBody, { rateLimitPerSecond: 50 }) },
    responses: {
      200: jsonResponse(WebhookSchema, "The webhook"),
      ...errorResponses(...WEBHOOK_COMMAND_ERRORS),
    },
  }),
  async (c) => {
    const { deps, partner } = c.var;
    const updated = await updateWebhook(deps.db, partner, c.req.valid("param").webhookId, c.req.valid("json"));
    return c.json(presentWebhook(updated), 200);
  },
);

webhooksRouter.openapi(
  createRoute({
    method: "post",
    path: "/webhooks/{webhookId}/enable",
    operationId: "enableWebhook",
    tags,
    summary: "Turn a disabled webhook back on",
    description:
      "The service disables a webhook whose every attempt failed for WEBHOOK_DISABLE_AFTER_HOURS (120 h by " +
      "default) with at least 10 attempts, or that answered 410 Gone, and sends `webhook.disabled`. This turns " +
      "it back on (`isActive: true`, `disabledAt` and `disabledReason` cleared); then `recover` delivers what " +
      "it missed. An enabled webhook is answered as it is; a deleted one is 404 KS-4206. Available once " +
      "release 3's rollout has finished.",
    middleware: [gated("webhook-endpoint-health")],
    request: { params: WebhookParams },
    responses: {
      200: jsonResponse(WebhookSchema, "The webhook, active"),
      ...errorResponses(...PARTNER_COMMON_ERRORS, ...OWNERSHIP_ERRORS),
    },
  }),
  async (c) => {
    const enabled = await enableWebhook(c.var.deps.db, c.var.partner, c.req.valid("param").webhookId);
    return c.json(presentWebhook(enabled), 200);
  },
);
