import { EVENT_TYPES } from "@outcomes/core";
import { sql } from "drizzle-orm";
import { bigint, index, jsonb, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { at, createdAt, environment } from "./columns.js";

/**
 * The outbox and the event log: events are written in the same transaction as their cause, then
 * fanned out to webhook deliveries (`dispatchedAt` set when that is done), and listed by
 * `GET /events` in `sequence` order. Nothing deletes events (CONTRACT §11 keeps them ≥ 30 days).
 */
export const events = pgTable(
  "events",
  {
    id: text("id").primaryKey(),
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
    index("events_undispatched_idx").on(table.createdAt).where(sql`dispatched_at is null`),
    uniqueIndex("events_log_uq").on(table.partnerId, table.environment, table.sequence),
    index("events_log_type_idx").on(table.partnerId, table.environment, table.type, table.sequence),
  ],
);
