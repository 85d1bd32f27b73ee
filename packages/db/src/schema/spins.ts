import { sql } from "drizzle-orm";
import { bigint, boolean, check, index, integer, jsonb, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { blocks } from "./blocks.js";
import { createdAt, environment, micros } from "./columns.js";
import { games } from "./games.js";
import { players } from "./players.js";

export const spins = pgTable(
  "spins",
  {
    id: text("id").primaryKey(),
    partnerId: text("partner_id").notNull(),
    environment: environment(),
    gameId: integer("game_id")
      .notNull()
      .references(() => games.id),
    playerId: bigint("player_id", { mode: "number" })
      .notNull()
      .references(() => players.id),
    /** The outcome's block and entry; null for a forced spin (CONTRACT §11), which took none. */
    blockId: bigint("block_id", { mode: "number" }).references(() => blocks.id),
    outcomeIndex: integer("outcome_index"),
    /** A sandbox spin with `forceTier`: its outcome was drawn from the PAR sheet, not taken from a block. */
    forced: boolean("forced").notNull().default(false),
    prizeTier: text("prize_tier").notNull(),
    /** Tier multiplier in millionths (exact: sheets allow 6 decimals). */
    multiplierMillionths: bigint("multiplier_millionths", { mode: "number" }).notNull(),
    wagerMicros: micros("wager_micros").notNull(),
    payoutMicros: micros("payout_micros").notNull(),
    balanceAfterMicros: micros("balance_after_micros").notNull(),
    /** `{comboString, reelSymbols, animationHints}` as served. */
    presentation: jsonb("presentation").notNull(),
    createdAt: createdAt(),
  },
  (table) => [
    // Unique among block outcomes; forced spins (no block, no index) are not constrained by it.
    uniqueIndex("spins_outcome_uq").on(table.blockId, table.outcomeIndex),
    check(
      "spins_outcome_or_forced",
      sql`case when ${table.forced} then ${table.blockId} is null and ${table.outcomeIndex} is null
        else ${table.blockId} is not null and ${table.outcomeIndex} is not null end`,
    ),
    index("spins_player_created_idx").on(table.playerId, table.createdAt),
    // Settlement: one partner's UTC day is a range of this index, and the key carries every column
    // the daily aggregate reads, so it runs as a (parallel) index-only scan (docs/settlements.md).
    index("spins_settlement_idx").on(
      table.partnerId,
      table.environment,
      table.createdAt,
      table.gameId,
      table.wagerMicros,
      table.payoutMicros,
    ),
  ],
);
