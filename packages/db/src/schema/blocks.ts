import { sql } from "drizzle-orm";
import { bigint, customType, index, integer, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { at, createdAt } from "./columns.js";
import { games } from "./games.js";

const bytea = customType<{ data: Buffer; driverData: Buffer }>({ dataType: () => "bytea" });

/**
 * A block of pre-computed outcomes, sealed (entries + SHA-256 commitment, seed hash and Merkle root)
 * before any is served. An outcome is addressed by (block id, index); the `spin_outcomes` primary
 * key on that pair guarantees each is used at most once, ever. The id is the public `blockId` and part
 * of every leaf, so the blocks worker takes it from the identity sequence before sealing (hence "by
 * default": the insert names it).
 */
export const blocks = pgTable(
  "blocks",
  {
    id: bigint("id", { mode: "number" }).primaryKey().generatedByDefaultAsIdentity(),
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
     * as bytes (first byte `[`), still readable. Stored out of line uncompressed (migration 0012), so
     * a slice (a block's header, a page of revealed entries) reads only the chunks holding it.
     */
    entries: bytea("entries").notNull(),
    commitment: text("commitment").notNull(),
    /** ready: sealed and queued, none served; serving: first outcome taken; exhausted: all taken or retired. */
    status: text("status", { enum: ["ready", "serving", "exhausted"] })
      .notNull()
      .default("ready"),
    startedAt: at("started_at"),
    /** When the last index was taken (status exhausted); entries given back may still be queued. */
    exhaustedAt: at("exhausted_at"),
    createdAt: createdAt(),
    /**
     * Provable fairness (docs/fairness.md); null on blocks sealed before it. `seed`: an independent
     * block's 32-byte DRBG seed (finite_pool blocks use their cycle's, in pool_cycles), secret until
     * revealed; `seedHash` (the block's or its cycle's) and `merkleRoot` are recorded at sealing;
     * `merkleLevels` keeps the tree from nodes of 16 leaves up (packages/core/src/par/fairness.ts).
     */
    seed: bytea("seed"),
    seedHash: text("seed_hash"),
    merkleRoot: text("merkle_root"),
    merkleLevels: bytea("merkle_levels"),
    /** Every entry served or retired (the public `exhausted`), set by the reveal sweep. */
    closedAt: at("closed_at"),
    /** The seed is shown: when closed (independent), when every block of the cycle is (finite_pool). */
    revealedAt: at("revealed_at"),
  },
  (table) => [
    uniqueIndex("blocks_game_sequence_uq").on(table.gameId, table.sequence),
    index("blocks_game_status_idx").on(table.gameId, table.status),
    // What the reveal sweep looks at: blocks whose last index is taken and that are not closed yet.
    index("blocks_closing_idx")
      .on(table.gameId)
      .where(sql`status = 'exhausted' and closed_at is null and seed_hash is not null`),
    // What it looks at for entries lost in flight: blocks whose last index is not taken yet (reveal.ts).
    index("blocks_unfinished_idx")
      .on(table.gameId, table.sequence)
      .where(sql`status <> 'exhausted' and closed_at is null and seed_hash is not null`),
  ],
);
