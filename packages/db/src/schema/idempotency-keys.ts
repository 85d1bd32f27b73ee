import { index, integer, jsonb, pgTable, primaryKey, text } from "drizzle-orm/pg-core";
import { createdAt, environment } from "./columns.js";

/** Stored responses of spins sent with `Idempotency-Key`, committed with the spin; kept 24 h. */
export const idempotencyKeys = pgTable(
  "idempotency_keys",
  {
    partnerId: text("partner_id").notNull(),
    environment: environment(),
    key: text("key").notNull(),
    /** SHA-256 of the canonical request body: the same key with another body is refused. */
    requestHash: text("request_hash").notNull(),
    responseStatus: integer("response_status").notNull(),
    responseBody: jsonb("response_body").notNull(),
    createdAt: createdAt(),
  },
  (table) => [
    primaryKey({ columns: [table.partnerId, table.environment, table.key] }),
    // The purge of expired records looks them up by age.
    index("idempotency_keys_created_idx").on(table.createdAt),
  ],
);
