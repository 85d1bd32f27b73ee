import { EVENT_TYPES } from "@outcomes/core";
import { sql } from "drizzle-orm";
import { bigint, index, jsonb, pgTable, primaryKey, text } from "drizzle-orm/pg-core";
import { at, createdAt, environment } from "./columns.js";

/**
 * The outbox and the event log: events are written in the same transaction as their cause, then
 * fanned out to webhook deliveries (`dispatchedAt` set when that is done), and listed by
 * `GET /events` in `sequence` order. Nothing deletes events (CONTRACT §11 keeps them ≥ 30 days).
 *
 * Range-partitioned by `created_at`, one partition per UTC month (migration 0011,
 * docs/partitioning.md): the primary key is (id, created_at), and webhook deliveries reference both.
 * A sequence is unique per partner and environment because the `event_sequences` counter row hands
 * each out once under its row lock; the log's index cannot be unique (it would need `created_at`).
 */
export const events = pgTable(
  "events",
  {
    id: text("id").notNull(),
    partnerId: text("partner_id").notNull(),
    environment: environment(),
    type: text("type", { enum: EVENT_TYPES }).notNull(),
    /** Strictly increasing per partner and environment, in commit order (see `eventSequences`). */
    sequence: bigint("sequence", { mode: "number" }).notNull(),
    /** `{id, sequence, type, createdAt, environment, data}`: the webhook body. */
    payload: jsonb("payload").notNull(),
    dispatchedAt: at("dispatched_at"),
    createdAt: createdAt(),
  },
  (table) => [
    primaryKey({ name: "events_pkey", columns: [table.id, table.createdAt] }),
    index("events_undispatched_idx").on(table.createdAt).where(sql`dispatched_at is null`),
    index("events_log_idx").on(table.partnerId, table.environment, table.sequence),
    index("events_log_type_idx").on(table.partnerId, table.environment, table.type, table.sequence),
  ],
);
