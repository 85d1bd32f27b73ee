import { sql } from "drizzle-orm";
import { index, integer, pgTable, text } from "drizzle-orm/pg-core";
import { at, createdAt } from "./columns.js";
import { webhooks } from "./webhooks.js";

export const RECOVERY_STATUSES = ["running", "done", "cancelled"] as const;

/**
 * A partner's recover request (CONTRACT §11), the record its worker job resumes from. It covers the
 * webhook's deliveries created at or after `since` that had ended `failed` when it was made
 * (`completed_at <= created_at`): failures after that are a later request's. The job walks them in
 * (created_at, id) order a chunk per transaction, and each chunk moves the cursor in the same
 * transaction as the deliveries it made, so a job that crashed resumes where it stopped.
 */
export const webhookRecoveries = pgTable(
  "webhook_recoveries",
  {
    /** `rcv_…`; also the id of its `webhook.recover` job. */
    id: text("id").primaryKey(),
    webhookId: text("webhook_id")
      .notNull()
      .references(() => webhooks.id),
    since: at("since").notNull(),
    /** The failed deliveries counted when it was requested: the `recovered` of the answer. */
    counted: integer("counted").notNull(),
    /** New deliveries made so far. */
    redelivered: integer("redelivered").notNull().default(0),
    /** The last delivery the job has passed, by (created_at, id); null before the first chunk. */
    cursorCreatedAt: at("cursor_created_at"),
    cursorId: text("cursor_id"),
    /** `running` until the job has passed every delivery (`done`) or found the webhook deleted (`cancelled`). */
    status: text("status", { enum: RECOVERY_STATUSES }).notNull().default("running"),
    finishedAt: at("finished_at"),
    createdAt: createdAt(),
  },
  (table) => [
    // The running recoveries of a webhook (a new request leaves their deliveries to them) and the
    // reconciler's look for lost jobs; finished ones are most rows.
    index("webhook_recoveries_running_idx").on(table.webhookId).where(sql`status = 'running'`),
  ],
);

export type WebhookRecoveryRecord = typeof webhookRecoveries.$inferSelect;
