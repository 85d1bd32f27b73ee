import { DELIVERY_STATUSES, WEBHOOK_MAX_ATTEMPTS } from "@outcomes/core";
import { sql } from "drizzle-orm";
import { boolean, foreignKey, index, integer, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { at, createdAt, environment } from "./columns.js";
import { events } from "./events.js";
import { ownerPartnerId } from "./partners.js";

export const webhooks = pgTable(
  "webhooks",
  {
    id: text("id").primaryKey(),
    partnerId: ownerPartnerId(),
    environment: environment(),
    url: text("url").notNull(),
    events: text("events").array().notNull(),
    secret: text("secret").notNull(),
    /** The secret a rotation replaced: deliveries are signed with it too until it expires. */
    previousSecret: text("previous_secret"),
    previousSecretExpiresAt: at("previous_secret_expires_at"),
    /** False once deleted or disabled; either way nothing is sent to it (both releases read it so). */
    isActive: boolean("is_active").notNull().default(true),
    deletedAt: at("deleted_at"),
    /** Set when the endpoint was disabled (CONTRACT §18: failing too long, or a 410); cleared by enable. */
    disabledAt: at("disabled_at"),
    disabledReason: text("disabled_reason"),
    /**
     * Health: the first failed attempt since the last success (null while healthy), and the failed
     * attempts since, counted up to the disable threshold only (no write per failure after it).
     */
    failingSince: at("failing_since"),
    failedAttempts: integer("failed_attempts").notNull().default(0),
    /** Deliveries per second at most (1..1000); null: unpaced. */
    rateLimitPerSecond: integer("rate_limit_per_second"),
    createdAt: createdAt(),
  },
  (table) => [index("webhooks_partner_idx").on(table.partnerId, table.environment)],
);

export const webhookDeliveries = pgTable(
  "webhook_deliveries",
  {
    /** Sent as `X-Service-Delivery-Id`, the same on every attempt (`webhook-id` is the event id). */
    id: text("id").primaryKey(),
    webhookId: text("webhook_id")
      .notNull()
      .references(() => webhooks.id),
    eventId: text("event_id").notNull(),
    /** The event's `created_at`: with `eventId` the event's key (`events` is partitioned by it). */
    eventCreatedAt: at("event_created_at").notNull(),
    eventType: text("event_type").notNull(),
    /** The exact bytes signed and sent on every attempt. */
    body: text("body").notNull(),
    status: text("status", { enum: DELIVERY_STATUSES }).notNull().default("pending"),
    attempts: integer("attempts").notNull().default(0),
    maxAttempts: integer("max_attempts").notNull().default(WEBHOOK_MAX_ATTEMPTS),
    lastResponseStatus: integer("last_response_status"),
    lastError: text("last_error"),
    nextAttemptAt: at("next_attempt_at"),
    /** Set on a delivery made by redeliver, recover or an operator's replay: the one it repeats. */
    redeliveryOf: text("redelivery_of"),
    /**
     * The `webhook.deliver-batch` job that makes this delivery's first attempt (fan-out's deliveries
     * since release 2's rollout finished); null for a delivery queued as a `webhook.deliver` job of
     * its own. The reconciler looks for this job before it queues one of the delivery's own.
     */
    batchId: text("batch_id"),
    completedAt: at("completed_at"),
    createdAt: createdAt(),
  },
  (table) => [
    foreignKey({
      name: "webhook_deliveries_event_fk",
      columns: [table.eventId, table.eventCreatedAt],
      foreignColumns: [events.id, events.createdAt],
    }),
    // Fan-out makes one first delivery per webhook and event, however often it runs.
    uniqueIndex("webhook_deliveries_fanout_uq").on(table.webhookId, table.eventId).where(sql`redelivery_of is null`),
    index("webhook_deliveries_webhook_created_idx").on(table.webhookId, table.createdAt),
    // "Was this failed delivery replayed yet?" (recover, bulk replay); most rows are first deliveries.
    index("webhook_deliveries_redelivery_idx").on(table.redeliveryOf).where(sql`redelivery_of is not null`),
    // Recover counts and walks a webhook's failed deliveries by (created_at, id); most rows succeeded.
    index("webhook_deliveries_failed_idx").on(table.webhookId, table.createdAt, table.id).where(sql`status = 'failed'`),
    // The worker's reconciler looks for open deliveries whose job went missing; finished ones are most rows.
    index("webhook_deliveries_open_idx").on(table.nextAttemptAt).where(sql`status in ('pending', 'retrying')`),
  ],
);
