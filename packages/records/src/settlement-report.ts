import { z } from "@hono/zod-openapi";
import { presentSettlementFigures, SETTLEMENT_STATUSES } from "@outcomes/core";
import { figuresOf, type SettlementReportRecord } from "@outcomes/db";
import { TimestampSchema } from "./fields.js";

/** A UTC day: the report's identity with its partner and environment (also the API's path and body field). */
export const ReportDateSchema = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/)
  .openapi({
    example: "2026-05-01",
    description: "A UTC day, YYYY-MM-DD (a real calendar date); anything else 400 KS-4105",
  });

const figures = {
  totalSpins: z.number().int().openapi({ example: 1520, description: "Spins created that UTC day, voided ones too" }),
  totalWageredUsd: z
    .number()
    .openapi({ example: 1520.5, description: "The wagers players paid (free rounds' are not)" }),
  totalPaidUsd: z.number().openapi({ example: 1433.25 }),
  voidedSpins: z
    .number()
    .int()
    .openapi({ example: 2, description: "Voids made that UTC day, of spins of any day (POST /spins/{spinId}/void)" }),
  voidedWageredUsd: z.number().openapi({ example: 3, description: "The wagers of those voided spins" }),
  voidedPaidUsd: z.number().openapi({ example: 1.5, description: "The payouts of those voided spins" }),
  freeRoundSpins: z.number().int().openapi({
    example: 40,
    description: "Free-round spins created that UTC day (counted in totalSpins; their payouts in totalPaidUsd)",
  }),
  freeRoundWagerUsd: z.number().openapi({
    example: 20,
    description: "Their wagers, which the partner paid for its players: not in totalWageredUsd",
  }),
  netUsd: z.number().openapi({
    example: 85.75,
    description: "(wagered − voidedWagered) − (paid − voidedPaid): what the partner keeps (may be negative)",
  }),
  rtp: z
    .number()
    .nullable()
    .openapi({ example: 0.942616, description: "Paid ÷ wagered of the day's spins; null when nothing wagered" }),
};

export const SettlementGameFiguresSchema = z
  .object({ gameId: z.number().int().openapi({ example: 1 }), ...figures })
  .openapi("SettlementGameFigures");

/** The report as the API and the CLI show it (CONTRACT §8). */
export const SettlementReportSchema = z
  .object({
    reportDate: ReportDateSchema,
    status: z.enum(SETTLEMENT_STATUSES).openapi({
      description: "GENERATED on creation; PENDING after an operator reissue; then acknowledged or disputed",
    }),
    ...figures,
    games: z.array(SettlementGameFiguresSchema).openapi({
      description: "The same figures per game registered before the day ended (zeros when it had no spins)",
    }),
    generatedAt: TimestampSchema,
    acknowledgedAt: TimestampSchema.nullable(),
    disputedAt: TimestampSchema.nullable(),
    disputeReason: z.string().nullable(),
  })
  .openapi("SettlementReport");
export type SettlementReportView = z.infer<typeof SettlementReportSchema>;

export function presentSettlementReport(record: SettlementReportRecord): SettlementReportView {
  const figures = figuresOf(record);
  return {
    reportDate: record.reportDate,
    status: record.status,
    ...presentSettlementFigures(figures),
    games: figures.games.map((game) => ({ gameId: game.gameId, ...presentSettlementFigures(game) })),
    generatedAt: record.generatedAt.toISOString(),
    acknowledgedAt: record.acknowledgedAt?.toISOString() ?? null,
    disputedAt: record.disputedAt?.toISOString() ?? null,
    disputeReason: record.disputeReason,
  };
}
