import { sql } from "drizzle-orm";
import { check, index, integer, pgTable, primaryKey, text } from "drizzle-orm/pg-core";
import { at, createdAt, environment, micros } from "./columns.js";
import { games } from "./games.js";
import { ownerPartnerId } from "./partners.js";

/**
 * Free-round grants (CONTRACT §14): spins a partner gives its players at a fixed wager and pays for.
 * What a grant is (game, wager, rounds, expiry) never changes once made, so the spin path may cache
 * it; what changes (`cancelled_at`, each player's rounds used) is checked by the spin's own statement.
 */
export const freeRoundGrants = pgTable(
  "free_round_grants",
  {
    id: text("id").primaryKey(),
    partnerId: ownerPartnerId(),
    environment: environment(),
    gameId: integer("game_id")
      .notNull()
      .references(() => games.id),
    /** The wager of every round: the partner pays it, the player's balance moves by the payout only. */
    wagerMicros: micros("wager_micros").notNull(),
    /** Rounds per player. */
    rounds: integer("rounds").notNull(),
    playerCount: integer("player_count").notNull(),
    expiresAt: at("expires_at").notNull(),
    createdAt: createdAt(),
    cancelledAt: at("cancelled_at"),
  },
  // Listing: a partner's grants newest first, one index range.
  (table) => [index("free_round_grants_owner_idx").on(table.partnerId, table.environment, table.createdAt, table.id)],
);

/**
 * One row per player of a grant (players need not exist yet: the partner's own id). The CHECK is the
 * last word on "never more rounds than granted": the spin statement reads this row under its lock
 * first and leaves out spins beyond it, so the CHECK only fails on a defect.
 */
export const freeRoundPlayers = pgTable(
  "free_round_players",
  {
    grantId: text("grant_id")
      .notNull()
      .references(() => freeRoundGrants.id),
    externalPlayerId: text("external_player_id").notNull(),
    /** The grant's rounds, copied so the CHECK can see them. */
    rounds: integer("rounds").notNull(),
    roundsUsed: integer("rounds_used").notNull().default(0),
    /** The payouts of the rounds used (and not voided). */
    paidMicros: micros("paid_micros").notNull().default(0),
  },
  (table) => [
    primaryKey({ name: "free_round_players_pkey", columns: [table.grantId, table.externalPlayerId] }),
    check("free_round_players_rounds_used", sql`${table.roundsUsed} between 0 and ${table.rounds}`),
  ],
);

/**
 * The spins that used a free round, one row each, written by the spin's own statement. Settlement
 * sums a day's rows here beside `spins` (their wagers are notional: the partner paid them), the
 * spin's answer and recall show `freeRound` from here, and a void gives its round back.
 */
export const freeRoundSpins = pgTable(
  "free_round_spins",
  {
    spinId: text("spin_id").primaryKey(),
    grantId: text("grant_id").notNull(),
    partnerId: text("partner_id").notNull(),
    environment: environment(),
    gameId: integer("game_id").notNull(),
    externalPlayerId: text("external_player_id").notNull(),
    wagerMicros: micros("wager_micros").notNull(),
    payoutMicros: micros("payout_micros").notNull(),
    /** The player's rounds of the grant left after this spin, as answered. */
    roundsLeft: integer("rounds_left").notNull(),
    /** The spin's `created_at` (its partition key, and the day settlement counts it in). */
    createdAt: at("created_at").notNull(),
  },
  (table) => [
    // Settlement: one partner's free-round spins of a UTC day are a range of it, with every column the sum reads.
    index("free_round_spins_settlement_idx").on(
      table.partnerId,
      table.environment,
      table.createdAt,
      table.gameId,
      table.wagerMicros,
    ),
  ],
);
