import { sql } from "drizzle-orm";
import { bigint, boolean, check, index, integer, jsonb, pgTable, primaryKey, text } from "drizzle-orm/pg-core";
import { blocks } from "./blocks.js";
import { createdAt, environment, micros } from "./columns.js";
import { games } from "./games.js";
import { players } from "./players.js";

/**
 * Range-partitioned by `created_at`, one partition per UTC day (migration 0011; partitions are made
 * ahead by the key-expiry role's `partitions.maintain` job, docs/partitioning.md). Every unique key of
 * a partitioned table holds the partition key, so the primary key is (id, created_at): an id is made
 * once (its time and 83 random bits) and inserted by one statement. "Each outcome is used by at most
 * one spin, ever" needs a key across all days: `spinOutcomes`, written by the same statement.
 */
export const spins = pgTable(
  "spins",
  {
    id: text("id").notNull(),
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
    primaryKey({ name: "spins_pkey", columns: [table.id, table.createdAt] }),
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

/**
 * The block outcomes spins used, one row each, unique across every day (`spins` is partitioned, so it
 * cannot hold this key): a second spin of one outcome fails the spin's statement (see
 * `isDuplicateOutcome`). Also where a block's used entries are looked up (recovery, the reserve),
 * and which spin took an entry (its id and `created_at`, the spin's partition key).
 */
export const spinOutcomes = pgTable(
  "spin_outcomes",
  {
    blockId: bigint("block_id", { mode: "number" }).notNull(),
    outcomeIndex: integer("outcome_index").notNull(),
    spinId: text("spin_id").notNull(),
    createdAt: createdAt(),
  },
  (table) => [primaryKey({ name: "spin_outcomes_pkey", columns: [table.blockId, table.outcomeIndex] })],
);
