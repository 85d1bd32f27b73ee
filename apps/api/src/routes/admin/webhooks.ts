import { listDisabledWebhooks } from "@outcomes/db";
import { OperatorWebhookSchema, presentOperatorWebhook } from "@outcomes/records";
import { gated } from "../../middleware/gated.js";
import { ADMIN_COMMON_ERRORS } from "../../openapi.js";
import { createRouter } from "../../router.js";
import { pagedListRoute } from "../paged-list.js";

/** Partners' webhook endpoints as operators watch them (CONTRACT §18). */
export const adminWebhooksRouter = createRouter();

pagedListRoute(adminWebhooksRouter, {
  path: "/webhooks/disabled",
  operationId: "listDisabledWebhooks",
  tags: ["Operator: webhooks"],
  summary: "List disabled webhooks of every partner, most recently disabled first",
  about:
    "Endpoints the service disabled: every attempt failed for WEBHOOK_DISABLE_AFTER_HOURS with at least 10 " +
    "attempts, or the receiver answered 410 Gone. Each says when and why; its partner turns it back on with " +
    "`POST /webhooks/{webhookId}/enable`. Deleted webhooks are not listed. Available once release 3's rollout " +
    "has finished.",
  middleware: [gated("webhook-endpoint-health")],
  schema: { name: "DisabledWebhookList", key: "webhooks", item: OperatorWebhookSchema },
  description: "A page of disabled webhooks",
  common: ADMIN_COMMON_ERRORS,
  list: (c, _params, window) => listDisabledWebhooks(c.var.deps.db, window),
  present: presentOperatorWebhook,
});
