import { z } from "@hono/zod-openapi";
import { EVENT_TYPES, type EventType } from "@outcomes/core";
import type { WebhookRecord } from "@outcomes/db";
import { OwnerFields, TimestampSchema } from "./fields.js";

const webhookFields = {
  id: z.string().openapi({ example: "whk_0Qx3zYk1aBcDeFgHiJkLmN" }),
  url: z.string(),
  events: z.array(z.enum(EVENT_TYPES)),
  isActive: z.boolean().openapi({ description: "False once deleted or disabled: nothing is sent to it" }),
  rateLimitPerSecond: z
    .number()
    .int()
    .nullable()
    .openapi({ description: "Deliveries per second at most (1..1000); null: not paced", example: null }),
  createdAt: TimestampSchema,
};

/** A webhook as listed: never its secret (CONTRACT §4, §18). */
export const WebhookSchema = z
  .object({
    ...webhookFields,
    deletedAt: TimestampSchema.nullable(),
    disabledAt: TimestampSchema.nullable().openapi({
      description: "When the service disabled it (every attempt failing too long, or a 410 Gone); null when enabled",
    }),
    disabledReason: z.string().nullable().openapi({ description: "Why it was disabled; null when enabled" }),
  })
  .openapi("Webhook", {
    description: "A webhook as listed (never its secret); deleted ones stay, inactive; disabled ones say why",
  });
export type WebhookView = z.infer<typeof WebhookSchema>;

/** A webhook as operators see it: whose it is, too. */
export const OperatorWebhookSchema = WebhookSchema.extend(OwnerFields).openapi("OperatorWebhook");
export type OperatorWebhookView = z.infer<typeof OperatorWebhookSchema>;

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
    rateLimitPerSecond: record.rateLimitPerSecond,
    createdAt: record.createdAt.toISOString(),
    deletedAt: record.deletedAt?.toISOString() ?? null,
    disabledAt: record.disabledAt?.toISOString() ?? null,
    disabledReason: record.disabledReason,
  };
}

export function presentRegisteredWebhook(record: WebhookRecord): RegisteredWebhookView {
  const {
    deletedAt: _deletedAt,
    disabledAt: _disabledAt,
    disabledReason: _disabledReason,
    ...view
  } = presentWebhook(record);
  return { ...view, secret: record.secret };
}

export function presentOperatorWebhook(record: WebhookRecord): OperatorWebhookView {
  return { ...presentWebhook(record), partnerId: record.partnerId, environment: record.environment };
}
