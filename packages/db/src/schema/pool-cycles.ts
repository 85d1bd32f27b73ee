import { customType, integer, pgTable, primaryKey } from "drizzle-orm/pg-core";
import { createdAt } from "./columns.js";
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
  },
  (table) => [primaryKey({ columns: [table.gameId, table.cycle] })],
);
