import { sql } from "drizzle-orm";
import { boolean, check, integer, pgTable, text } from "drizzle-orm/pg-core";
import { at, micros } from "./columns.js";

/**
 * Jurisdiction profiles (CONTRACT §16): the pace and stake a market allows. The built-ins (`NONE`,
 * `UK-GC`, `DE-GLUSTV`, `ON-AGCO`) are seeded by their migration; operators change their figures
 * and add their own, and none is ever deleted (partners and players name them).
 */
export const jurisdictions = pgTable(
  "jurisdictions",
  {
    code: text("code").primaryKey(),
    name: text("name").notNull(),
    /** The least time between the starts of one player's rounds, in ms (0: none). */
    minRoundMs: integer("min_round_ms").notNull().default(0),
    /** The most one spin may stake, in micro-USD; null: no limit. */
    maxWagerMicros: micros("max_wager_micros"),
    /** A reminder is due on the first spin past each such mark of a session; null: never. */
    sessionReminderMinutes: integer("session_reminder_minutes"),
    builtIn: boolean("built_in").notNull().default(false),
    updatedAt: at("updated_at").notNull().defaultNow(),
  },
  (table) => [
    check("jurisdictions_min_round_ms", sql`${table.minRoundMs} between 0 and 60000`),
    check("jurisdictions_max_wager", sql`${table.maxWagerMicros} > 0`),
    check("jurisdictions_reminder", sql`${table.sessionReminderMinutes} between 1 and 1440`),
  ],
);
