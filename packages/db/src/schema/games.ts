import { boolean, integer, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { createdAt, environment, micros } from "./columns.js";
import { parSheets } from "./par-sheets.js";
import { ownerPartnerId } from "./partners.js";

export const games = pgTable(
  "games",
  {
    /** `gameConfigId` in the API. */
    id: integer("id").primaryKey().generatedAlwaysAsIdentity(),
    partnerId: ownerPartnerId(),
    environment: environment(),
    parSheetId: text("par_sheet_id")
      .notNull()
      .references(() => parSheets.id),
    name: text("name").notNull(),
    minWagerMicros: micros("min_wager_micros"),
    maxWagerMicros: micros("max_wager_micros").notNull(),
    /** Null means the deployment's LARGE_WIN_THRESHOLD_USD. */
    largeWinThresholdMicros: micros("large_win_threshold_micros"),
    isActive: boolean("is_active").notNull().default(true),
    /**
     * True once generation has filled the reserve to TARGET_READY_BLOCKS; the first block start that
     * leaves fewer than MIN_READY_BLOCKS ready writes one `block.low_reserve` and clears it, so an
     * event is written once per drop (and never while a new game fills its first reserve).
     */
    lowReserveArmed: boolean("low_reserve_armed").notNull().default(false),
    createdAt: createdAt(),
  },
  (table) => [uniqueIndex("games_partner_env_name_uq").on(table.partnerId, table.environment, table.name)],
);
