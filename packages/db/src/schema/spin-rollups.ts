import { sql } from "drizzle-orm";
import { bigint, check, integer, numeric, pgTable, primaryKey, smallint, text, timestamp } from "drizzle-orm/pg-core";
import { environment } from "./columns.js";

const hour = (name: string) => timestamp(name, { withTimezone: true, precision: 3 });

/**
 * Settlement roll-ups: the spins and voids of each sealed UTC hour, summed per partner, environment
 * and game. A day's report adds 24 rows per game instead of scanning the day's spins; hours not
 * sealed (yet) are summed from `spins` and `spin_voids` directly. Written only by `sealSpinRollups`
 * (docs/settlements.md).
 */
export const spinHourlyTotals = pgTable(
  "spin_hourly_totals",
  {
    partnerId: text("partner_id").notNull(),
    environment: environment(),
    /** Start of the UTC hour. */
    hour: hour("hour").notNull(),
    gameId: integer("game_id").notNull(),
    totalSpins: bigint("total_spins", { mode: "number" }).notNull(),
    /**
     * numeric, as summed: every player is bounded (players_*_bound), but an hour of a game with
     * many players at the bound can pass 2^63, and one partner's figures must never stop the
     * roll-up for the others (CONTRACT §9). Read as BigInt.
     */
    totalWageredMicros: numeric("total_wagered_micros", { mode: "bigint" }).notNull(),
    totalPaidMicros: numeric("total_paid_micros", { mode: "bigint" }).notNull(),
    /** The voids made in the hour (of spins of any hour); 0 in hours sealed before voids existed. */
    voidedSpins: bigint("voided_spins", { mode: "number" }).notNull().default(0),
    voidedWageredMicros: numeric("voided_wagered_micros", { mode: "bigint" }).notNull().default(sql`0`),
    voidedPaidMicros: numeric("voided_paid_micros", { mode: "bigint" }).notNull().default(sql`0`),
    /** The free-round spins created in the hour and their notional wagers (not in `totalWageredMicros`). */
    freeRoundSpins: bigint("free_round_spins", { mode: "number" }).notNull().default(0),
    freeRoundWagerMicros: numeric("free_round_wager_micros", { mode: "bigint" }).notNull().default(sql`0`),
  },
  (table) => [primaryKey({ columns: [table.partnerId, table.environment, table.hour, table.gameId] })],
);

/**
 * The one row saying which hours the roll-ups cover: [coveredFrom, sealedUntil). `pendingUntil` and
 * `pendingXmax` are the next seal's candidate: the hour boundary, and a transaction id above every
 * id assigned before it was recorded (the recording transaction's own); the seal waits until every
 * transaction up to that id has ended.
 */
export const spinRollupState = pgTable(
  "spin_rollup_state",
  {
    id: smallint("id").primaryKey().default(1),
    coveredFrom: hour("covered_from").notNull(),
    sealedUntil: hour("sealed_until").notNull(),
    pendingUntil: hour("pending_until"),
    /** `xid8` as text (drizzle has no xid8 column). */
    pendingXmax: text("pending_xmax"),
    updatedAt: hour("updated_at").notNull().defaultNow(),
  },
  (table) => [check("spin_rollup_state_single_row", sql`${table.id} = 1`)],
);
