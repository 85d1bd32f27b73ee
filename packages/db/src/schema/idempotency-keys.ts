import { integer, jsonb, pgTable, primaryKey, text } from "drizzle-orm/pg-core";
import { createdAt, environment } from "./columns.js";

/**
 * Stored responses of spins sent with `Idempotency-Key`, committed with the spin; honoured 24 h.
 * Range-partitioned by `created_at`, one partition per UTC day, and a whole day is dropped at once
 * once all of it has expired (`partitions.maintain`, docs/partitioning.md). The key holds
 * `created_at` (a partitioned table's keys must): one live record per key is kept by the advisory
 * lock every batch that writes a keyed spin takes on its keys first (`lockAndFindIdempotencyRecords`),
 * and `saveIdempotencyRecords` fails rather than store a second live record.
 */
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
    primaryKey({
      name: "idempotency_keys_pkey",
      columns: [table.partnerId, table.environment, table.key, table.createdAt],
    }),
  ],
);
