import { sql } from "drizzle-orm";
import { bigint, check, date, integer, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { at, createdAt, environment, micros } from "./columns.js";
import { ownerPartnerId } from "./partners.js";

export const players = pgTable(
  "players",
  {
    id: bigint("id", { mode: "number" }).primaryKey().generatedAlwaysAsIdentity(),
    partnerId: ownerPartnerId(),
    environment: environment(),
    /** The partner's own player id. */
    externalId: text("external_id").notNull(),
    /** Net position with the service: Σ(payout − wager). May be negative. */
    balanceMicros: micros("balance_micros").notNull().default(0),
    totalSpins: integer("total_spins").notNull().default(0),
    totalWageredMicros: micros("total_wagered_micros").notNull().default(0),
    totalPaidMicros: micros("total_paid_micros").notNull().default(0),
    createdAt: createdAt(),
    /** The start of the player's latest spin (the jurisdiction's pace counts from it). */
    updatedAt: at("updated_at").notNull().defaultNow(),
    /**
     * What a protected player's limits count (CONTRACT §16), kept by the spin statement under this
     * row's lock for players whose checks run: per period (its first UTC day), the wagers charged and
     * the net loss (charged − paid; voids take theirs back).
     */
    dayStart: date("day_start", { mode: "string" }),
    dayWageredMicros: micros("day_wagered_micros").notNull().default(0),
    dayLostMicros: micros("day_lost_micros").notNull().default(0),
    weekStart: date("week_start", { mode: "string" }),
    weekWageredMicros: micros("week_wagered_micros").notNull().default(0),
    weekLostMicros: micros("week_lost_micros").notNull().default(0),
    monthStart: date("month_start", { mode: "string" }),
    monthWageredMicros: micros("month_wagered_micros").notNull().default(0),
    monthLostMicros: micros("month_lost_micros").notNull().default(0),
    /** The player's session (spins with gaps under 30 minutes): its start, spins and paid − charged. */
    sessionStartedAt: at("session_started_at"),
    sessionSpins: integer("session_spins").notNull().default(0),
    sessionNetMicros: micros("session_net_micros").notNull().default(0),
  },
  (table) => [
    uniqueIndex("players_partner_env_external_uq").on(table.partnerId, table.environment, table.externalId),
    // Every figure a player shows stays exact as a JSON number (CONTRACT §9): a spin that would take
    // one past 2^53 − 1 (Number.MAX_SAFE_INTEGER) micro-USD fails here, alone (see `exceededPlayerBound`), and is refused as KS-4103.
    // Added NOT VALID (migration 0012): enforced on every write, without a scan of existing rows.
    check("players_balance_bound", sql`abs(${table.balanceMicros}) <= 9007199254740991`),
    check("players_total_wagered_bound", sql`${table.totalWageredMicros} <= 9007199254740991`),
    check("players_total_paid_bound", sql`${table.totalPaidMicros} <= 9007199254740991`),
  ],
);
