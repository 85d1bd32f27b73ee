import { z } from "@hono/zod-openapi";
import { ErrorCode, isProvisionalReport, presentSettlementFigures, SETTLEMENT_STATUSES } from "@outcomes/core";
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

/** An amount as an exact decimal string: digits, an optional minus and at most 6 decimals. */
function exactUsd(example: string) {
  return z
    .string()
    .regex(/^-?\d+(\.\d{1,6})?$/)
    .openapi({ example });
}

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
  exact: z
    .object({
      totalWageredUsd: exactUsd("1520.5"),
      totalPaidUsd: exactUsd("1433.25"),
      voidedWageredUsd: exactUsd("3"),
      voidedPaidUsd: exactUsd("1.5"),
      freeRoundWagerUsd: exactUsd("20"),
      netUsd: exactUsd("85.75"),
    })
    .openapi("SettlementExactAmounts", {
      description:
        "Every amount above as an exact decimal string of USD, whatever its size: read these when figuresExact is false",
    }),
  figuresExact: z.boolean().openapi({
    example: true,
    description:
      "False when an amount passes 2^53 − 1 micro-USD (about 9,007,199,254 USD): its JSON number is then the nearest " +
      "double, not exact, and `exact` holds its value",
  }),
};

export const SettlementGameFiguresSchema = z
  .object({ gameId: z.number().int().openapi({ example: 1 }), ...figures })
  .openapi("SettlementGameFigures");

/** The codes a spin refused by player protection answers, each counted in the report. */
const REFUSAL_CODES = [
  ErrorCode.WagerAboveJurisdictionLimit,
  ErrorCode.PlayerRestricted,
  ErrorCode.PlayerLimitReached,
  ErrorCode.RoundTooSoon,
] as const;
type RefusalCounts = Record<(typeof REFUSAL_CODES)[number], z.ZodNumber>;

/** The report as the API and the CLI show it (CONTRACT §8). */
export const SettlementReportSchema = z
  .object({
    reportDate: ReportDateSchema,
    status: z.enum(SETTLEMENT_STATUSES).openapi({
      description: "GENERATED on creation; PENDING after an operator reissue; then acknowledged or disputed",
    }),
    provisional: z.boolean().openapi({
      example: false,
      description:
        "True while the figures may still change: computed before the UTC day ended. Acknowledge and dispute then " +
        "answer 409 KS-4305; the first settlement run after the day ends makes the report final (false)",
    }),
    ...figures,
    games: z.array(SettlementGameFiguresSchema).openapi({
      description:
        "The same figures per game registered before the day ended (zeros when it had no spins); the report's " +
        "figuresExact is false when any game's is",
    }),
    refusedSpins: z
      .object(Object.fromEntries(REFUSAL_CODES.map((code) => [code, z.number().int()])) as RefusalCounts)
      .openapi("RefusedSpins", {
        description:
          "Spins that player protection refused that UTC day (docs/jurisdictions.md), by error code; nothing of " +
          "them is in the figures above",
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
  const totals = presentSettlementFigures(figures);
  const games = figures.games.map((game) => ({ gameId: game.gameId, ...presentSettlementFigures(game) }));
  return {
    reportDate: record.reportDate,
    status: record.status,
    provisional: isProvisionalReport(record),
    ...totals,
    figuresExact: totals.figuresExact && games.every((game) => game.figuresExact),
    games,
    refusedSpins: Object.fromEntries(
      REFUSAL_CODES.map((code) => [code, record.refusedSpins?.[code] ?? 0]),
    ) as SettlementReportView["refusedSpins"],
    generatedAt: record.generatedAt.toISOString(),
    acknowledgedAt: record.acknowledgedAt?.toISOString() ?? null,
    disputedAt: record.disputedAt?.toISOString() ?? null,
    disputeReason: record.disputeReason,
  };
}
