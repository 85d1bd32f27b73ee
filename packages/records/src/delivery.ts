import { z } from "@hono/zod-openapi";
import { DELIVERY_STATUSES, EVENT_TYPES, type EventType, WEBHOOK_MAX_ATTEMPTS } from "@outcomes/core";
import type { DeliveryRecord, DeliveryWithOwner } from "@outcomes/db";
import { OwnerFields, TimestampSchema } from "./fields.js";

/** One event's delivery to one webhook, as its partner sees it. */
export const DeliverySchema = z
  .object({
    id: z
      .string()
      .openapi({ description: "Sent as X-Service-Delivery-Id on every attempt (webhook-id is the event id)" }),
    event: z.enum(EVENT_TYPES),
    status: z.enum(DELIVERY_STATUSES),
    attempts: z.number().int(),
    maxAttempts: z.number().int().openapi({ example: WEBHOOK_MAX_ATTEMPTS }),
    lastResponseStatus: z.number().int().nullable(),
    lastError: z.string().nullable(),
    nextAttemptAt: TimestampSchema.nullable(),
    createdAt: TimestampSchema,
    completedAt: TimestampSchema.nullable(),
  })
  .openapi("WebhookDelivery");
export type DeliveryView = z.infer<typeof DeliverySchema>;

/** A delivery as operators see it (the CLI): the partner's view plus whose webhook it went to. */
export const OperatorDeliverySchema = DeliverySchema.extend({
  webhookId: z.string(),
  ...OwnerFields,
  redeliveryOf: z.string().nullable(),
});
export type OperatorDeliveryView = z.infer<typeof OperatorDeliverySchema>;

export function presentDelivery(record: DeliveryRecord): DeliveryView {
  return {
    id: record.id,
    // Written from an event's type, which EVENT_TYPES names.
    event: record.eventType as EventType,
    status: record.status,
    attempts: record.attempts,
    maxAttempts: record.maxAttempts,
    lastResponseStatus: record.lastResponseStatus,
    lastError: record.lastError,
    nextAttemptAt: record.nextAttemptAt?.toISOString() ?? null,
    createdAt: record.createdAt.toISOString(),
    completedAt: record.completedAt?.toISOString() ?? null,
  };
}

export function presentOperatorDelivery(row: DeliveryWithOwner): OperatorDeliveryView {
  return {
    ...presentDelivery(row.delivery),
    webhookId: row.delivery.webhookId,
    partnerId: row.partnerId,
    environment: row.environment,
    redeliveryOf: row.delivery.redeliveryOf,
  };
}
