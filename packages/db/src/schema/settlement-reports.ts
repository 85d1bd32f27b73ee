import { SETTLEMENT_STATUSES } from "@outcomes/core";
import { sql } from "drizzle-orm";
import { bigint, boolean, date, index, jsonb, numeric, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { at, createdAt, environment } from "./columns.js";
import { ownerPartnerId } from "./partners.js";

/**
 * A day's amount in micro-USD: numeric, as summed (migration 0021; bigint before), so a partner-day
 * past 2^53 (or 2^63) micro-USD is stored exactly and read as BigInt (CONTRACT §9, docs/settlements.md).
 */
const amount = (name: string) => numeric(name, { mode: "bigint" });

export const settlementReports = pgTable(
  "settlement_reports",
  {
    id: text("id").primaryKey(),
    partnerId: ownerPartnerId(),
    environment: environment(),
    reportDate: date("report_date", { mode: "string" }).notNull(),
    status: text("status", { enum: SETTLEMENT_STATUSES }).notNull(),
    totalSpins: bigint("total_spins", { mode: "number" }).notNull(),
    totalWageredMicros: amount("total_wagered_micros").notNull(),
    totalPaidMicros: amount("total_paid_micros").notNull(),
    /** The voids made that day (0 in reports of releases before voids). */
    voidedSpins: bigint("voided_spins", { mode: "number" }).notNull().default(0),
    voidedWageredMicros: amount("voided_wagered_micros").notNull().default(sql`0`),
    voidedPaidMicros: amount("voided_paid_micros").notNull().default(sql`0`),
    /** Free-round spins created that day and their notional wagers (0 in reports of releases before them). */
    freeRoundSpins: bigint("free_round_spins", { mode: "number" }).notNull().default(0),
    freeRoundWagerMicros: amount("free_round_wager_micros").notNull().default(sql`0`),
    /**
     * Per-game figures: `[{gameId, totalSpins, totalWageredMicros, totalPaidMicros, voidedSpins,
     * voidedWageredMicros, voidedPaidMicros, freeRoundSpins, freeRoundWagerMicros}]` (the later ones absent
     * in reports stored before they existed). Amounts are JSON numbers, or decimal strings past 2^53.
     */
    games: jsonb("games").notNull(),
    /** Spins refused by player protection that UTC day, by code (`spin_refusals`); `{}` before release 3. */
    refusedSpins: jsonb("refused_spins").$type<Record<string, number>>().notNull().default({}),
    generatedAt: at("generated_at").notNull(),
    /**
     * Whether the figures may still miss spins of the day (CONTRACT §8): true when computed before the
     * day ended (or while a transaction begun before its end was still open). Null in rows release 2
     * wrote: then derived from `generatedAt` (`isProvisionalReport`).
     */
    provisional: boolean("provisional"),
    acknowledgedAt: at("acknowledged_at"),
    disputedAt: at("disputed_at"),
    disputeReason: text("dispute_reason"),
    createdAt: createdAt(),
  },
  (table) => [
    uniqueIndex("settlement_reports_partner_env_date_uq").on(table.partnerId, table.environment, table.reportDate),
    /** The reports a run may still have to make final (`overdueProvisionalReports`): few, however many days pass. */
    index("settlement_reports_provisional_idx").on(table.reportDate).where(sql`${table.provisional} is not false`),
  ],
);
