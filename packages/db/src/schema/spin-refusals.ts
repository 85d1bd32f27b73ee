import { date, integer, pgTable, primaryKey, text } from "drizzle-orm/pg-core";
import { environment } from "./columns.js";
import { partners } from "./partners.js";

/**
 * Spins refused by player protection (CONTRACT §16), counted per partner, environment, UTC day and
 * code (KS-4220..4222, KS-4293), for the day's settlement report. A refused spin writes nothing
 * else: its count is added after its answer is known, outside the spin's statement.
 */
export const spinRefusals = pgTable(
  "spin_refusals",
  {
    partnerId: text("partner_id")
      .notNull()
      .references(() => partners.id),
    environment: environment(),
    day: date("day", { mode: "string" }).notNull(),
    errorCode: text("error_code").notNull(),
    refused: integer("refused").notNull().default(0),
  },
  (table) => [primaryKey({ columns: [table.partnerId, table.environment, table.day, table.errorCode] })],
);
