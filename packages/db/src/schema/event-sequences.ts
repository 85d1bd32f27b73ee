import { bigint, pgTable, primaryKey, text } from "drizzle-orm/pg-core";
import { environment } from "./columns.js";

/**
 * The last event sequence of each partner and environment. A transaction that stores events takes
 * the row with an upsert (`INSERT … ON CONFLICT DO UPDATE … RETURNING`) as its last statement (see `insertEvents`), and holds its lock
 * until it commits: sequences are assigned, and become visible, in commit order, so a reader of the
 * event log that has seen sequence n will never later find a smaller one appear.
 */
export const eventSequences = pgTable(
  "event_sequences",
  {
    partnerId: text("partner_id").notNull(),
    environment: environment(),
    lastSequence: bigint("last_sequence", { mode: "number" }).notNull(),
  },
  (table) => [primaryKey({ columns: [table.partnerId, table.environment] })],
);
