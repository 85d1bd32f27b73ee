import { SETTLEMENT_STATUSES } from "@outcomes/core";
import { bigint, date, jsonb, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { at, createdAt, environment, micros } from "./columns.js";
import { partners } from "./partners.js";

export const settlementReports = pgTable(
  "settlement_reports",
  {
    id: text("id").primaryKey(),
    partnerId: text("partner_id")
      .notNull()
      .references(() => partners.id),
    environment: environment(),
    reportDate: date("report_date", { mode: "string" }).notNull(),
    status: text("status", { enum: SETTLEMENT_STATUSES }).notNull(),
    totalSpins: bigint("total_spins", { mode: "number" }).notNull(),
    totalWageredMicros: micros("total_wagered_micros").notNull(),
    totalPaidMicros: micros("total_paid_micros").notNull(),
    /** The voids made that day (0 in reports of releases before voids). */
    voidedSpins: bigint("voided_spins", { mode: "number" }).notNull().default(0),
    voidedWageredMicros: micros("voided_wagered_micros").notNull().default(0),
    voidedPaidMicros: micros("voided_paid_micros").notNull().default(0),
    /** Free-round spins created that day and their notional wagers (0 in reports of releases before them). */
    freeRoundSpins: bigint("free_round_spins", { mode: "number" }).notNull().default(0),
    freeRoundWagerMicros: micros("free_round_wager_micros").notNull().default(0),
    /**
     * Per-game figures: `[{gameId, totalSpins, totalWageredMicros, totalPaidMicros, voidedSpins,
     * voidedWageredMicros, voidedPaidMicros, freeRoundSpins, freeRoundWagerMicros}]` (the later ones absent
     * in reports stored before they existed).
     */
    games: jsonb("games").notNull(),
    generatedAt: at("generated_at").notNull(),
    acknowledgedAt: at("acknowledged_at"),
    disputedAt: at("disputed_at"),
    disputeReason: text("dispute_reason"),
    createdAt: createdAt(),
  },
  (table) => [
    uniqueIndex("settlement_reports_partner_env_date_uq").on(table.partnerId, table.environment, table.reportDate),
  ],
);
