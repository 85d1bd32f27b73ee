import { bigint, customType, index, integer, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { at, createdAt } from "./columns.js";
import { games } from "./games.js";

const bytea = customType<{ data: Buffer; driverData: Buffer }>({ dataType: () => "bytea" });

/**
 * A block of pre-computed outcomes, sealed (entries + SHA-256 commitment) before any is served.
 * An outcome is addressed by (block id, index); the spins table's unique key on that pair
 * guarantees each is used at most once, ever.
 */
export const blocks = pgTable(
  "blocks",
  {
    id: bigint("id", { mode: "number" }).primaryKey().generatedAlwaysAsIdentity(),
    gameId: integer("game_id")
      .notNull()
      .references(() => games.id),
    /** Serving order within the game. */
    sequence: integer("sequence").notNull(),
    /** finite_pool: the cycle this block was cut from; independent: 0. */
    cycle: integer("cycle").notNull().default(0),
    /** finite_pool: position of this block's first outcome in its cycle (see pool_cycles); else 0. */
    cycleOffset: integer("cycle_offset").notNull().default(0),
    size: integer("size").notNull(),
    /**
     * Outcome entries in the binary KSB1 form (packages/core/src/par/entries.ts); the commitment is
     * SHA-256 of exactly these bytes. Blocks sealed before that form hold their canonical JSON text
     * as bytes (first byte `[`), still readable.
     */
    entries: bytea("entries").notNull(),
    commitment: text("commitment").notNull(),
    /** ready: sealed and queued, none served; serving: first outcome taken; exhausted: all taken or retired. */
    status: text("status", { enum: ["ready", "serving", "exhausted"] })
      .notNull()
      .default("ready"),
    startedAt: at("started_at"),
    exhaustedAt: at("exhausted_at"),
    createdAt: createdAt(),
  },
  (table) => [
    uniqueIndex("blocks_game_sequence_uq").on(table.gameId, table.sequence),
    index("blocks_game_status_idx").on(table.gameId, table.status),
  ],
);
