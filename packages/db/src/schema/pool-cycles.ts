import { customType, integer, pgTable, primaryKey, text } from "drizzle-orm/pg-core";
import { at, createdAt } from "./columns.js";
import { games } from "./games.js";

const bytea = customType<{ data: Buffer; driverData: Buffer }>({ dataType: () => "bytea" });

/**
 * A finite_pool game's shuffled cycles: one byte per outcome, the index of its tier, in serving
 * order. Blocks are cut from a cycle in order (`blocks.cycle`, `blocks.cycle_offset`); the cycle is
 * stored once when its first block is cut, so the rest of it survives restarts and other workers.
 */
export const poolCycles = pgTable(
  "pool_cycles",
  {
    gameId: integer("game_id")
      .notNull()
      .references(() => games.id),
    /** 1, 2, … per game. */
    cycle: integer("cycle").notNull(),
    tiers: bytea("tiers").notNull(),
    createdAt: createdAt(),
    /**
     * The cycle's 32-byte DRBG seed: the shuffle and every block's windows and salts derive from it
     * (docs/fairness.md). Secret until every block of the cycle is closed; null on cycles shuffled
     * before provable fairness (never continued: the next block starts a new cycle).
     */
    seed: bytea("seed"),
    seedHash: text("seed_hash"),
    revealedAt: at("revealed_at"),
  },
  (table) => [primaryKey({ columns: [table.gameId, table.cycle] })],
);
