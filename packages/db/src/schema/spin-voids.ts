import { bigint, index, integer, pgTable, text } from "drizzle-orm/pg-core";
import { at, environment, micros } from "./columns.js";

/**
 * Voided spins (CONTRACT §13), one row each, insert-only: the spin row itself never changes (the
 * spin path writes nothing more for the voids that may follow), and the primary key makes a second
 * void of a spin impossible. Written in one transaction with the player's reversed figures and the
 * `spin.voided` event. The spin's figures are copied so that settlement sums the voids of a day
 * without reading `spins` (partitioned by the spin's day, not the void's).
 */
export const spinVoids = pgTable(
  "spin_voids",
  {
    spinId: text("spin_id").primaryKey(),
    partnerId: text("partner_id").notNull(),
    environment: environment(),
    gameId: integer("game_id").notNull(),
    playerId: bigint("player_id", { mode: "number" }).notNull(),
    /** The spin's `created_at`: its row's partition key. */
    spinCreatedAt: at("spin_created_at").notNull(),
    /** The spin's outcome in its block; null for a forced sandbox spin. */
    blockId: bigint("block_id", { mode: "number" }),
    outcomeIndex: integer("outcome_index"),
    prizeTier: text("prize_tier").notNull(),
    wagerMicros: micros("wager_micros").notNull(),
    payoutMicros: micros("payout_micros").notNull(),
    reason: text("reason").notNull(),
    /** `clock_timestamp()` at the insert, after the transaction got its id (as `spins.created_at`: the roll-ups' seal relies on it). */
    voidedAt: at("voided_at").notNull(),
  },
  (table) => [
    // Settlement: one partner's voids of a UTC day are a range of it, with every column the sum reads.
    index("spin_voids_settlement_idx").on(
      table.partnerId,
      table.environment,
      table.voidedAt,
      table.gameId,
      table.wagerMicros,
      table.payoutMicros,
    ),
    // Revealed entries: a page's voided entries, and a block's count of them (the page cache's version).
    index("spin_voids_block_idx").on(table.blockId, table.outcomeIndex),
    // A player's spin listing counts its voided spins beside `players.total_spins`.
    index("spin_voids_player_idx").on(table.playerId),
  ],
);
