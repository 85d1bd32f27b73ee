import { z } from "@hono/zod-openapi";
import { EVENT_TYPES, type EventType } from "@outcomes/core";
import type { WebhookRecord } from "@outcomes/db";
import { TimestampSchema } from "./fields.js";

const webhookFields = {
  id: z.string().openapi({ example: "whk_0Qx3zYk1aBcDeFgHiJkLmN" }),
  url: z.string(),
  events: z.array(z.enum(EVENT_TYPES)),
  isActive: z.boolean(),
  createdAt: TimestampSchema,
};

/** A webhook as listed: never its secret (CONTRACT §4). */
export const WebhookSchema = z
  .object({ ...webhookFields, deletedAt: TimestampSchema.nullable() })
  .openapi("Webhook", { description: "A webhook as listed (never its secret); deleted ones stay, inactive" });
export type WebhookView = z.infer<typeof WebhookSchema>;

/** The answer to registration: the only time the secret is shown. */
export const RegisteredWebhookSchema = z
  .object({
    ...webhookFields,
    secret: z.string().openapi({
      example: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
      description: "Signing secret; shown only in this response",
    }),
  })
  .openapi("RegisteredWebhook");
export type RegisteredWebhookView = z.infer<typeof RegisteredWebhookSchema>;

export function presentWebhook(record: WebhookRecord): WebhookView {
  return {
    id: record.id,
    url: record.url,
    // Checked against EVENT_TYPES when the webhook was registered.
    events: record.events as EventType[],
    isActive: record.isActive,
    createdAt: record.createdAt.toISOString(),
    deletedAt: record.deletedAt?.toISOString() ?? null,
  };
}

export function presentRegisteredWebhook(record: WebhookRecord): RegisteredWebhookView {
  const { deletedAt: _deletedAt, ...view } = presentWebhook(record);
  return { ...view, secret: record.secret };
}
