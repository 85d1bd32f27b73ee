import { EVENT_TYPES } from "@outcomes/core";
import { sql } from "drizzle-orm";
import { index, jsonb, pgTable, text } from "drizzle-orm/pg-core";
import { at, createdAt, environment } from "./columns.js";

/**
 * The outbox: events are written in the same transaction as their cause, then fanned out
 * to webhook deliveries (`dispatchedAt` set when that is done).
 */
export const events = pgTable(
  "events",
  {
    id: text("id").primaryKey(),
    partnerId: text("partner_id").notNull(),
    environment: environment(),
    type: text("type", { enum: EVENT_TYPES }).notNull(),
    /** `{id, type, createdAt, environment, data}`: the webhook body. */
    payload: jsonb("payload").notNull(),
    dispatchedAt: at("dispatched_at"),
    createdAt: createdAt(),
  },
  (table) => [index("events_undispatched_idx").on(table.createdAt).where(sql`dispatched_at is null`)],
);
