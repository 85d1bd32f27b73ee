import { z } from "@hono/zod-openapi";
import { requireReportDate, requireSettleableReportDate, SETTLEMENT_STATUSES } from "@outcomes/core";
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../context.js";
import { Timestamp } from "../openapi.js";

/** Shapes and guards shared by the partner and operator settlement routes (CONTRACT §8). */

const DATE_DESCRIPTION = "A UTC day, YYYY-MM-DD (a real calendar date); anything else 400 KS-4105";

export const ReportDate = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/)
  .openapi({ example: "2026-05-01", description: DATE_DESCRIPTION });

export const ReportDateParams = z.object({
  reportDate: ReportDate.openapi({ param: { name: "reportDate", in: "path" } }),
});

const figures = {
  totalSpins: z.number().int().openapi({ example: 1520 }),
  totalWageredUsd: z.number().openapi({ example: 1520.5 }),
  totalPaidUsd: z.number().openapi({ example: 1433.25 }),
  netUsd: z.number().openapi({ example: 87.25, description: "Wagered − paid (may be negative)" }),
  rtp: z.number().nullable().openapi({ example: 0.942616, description: "Paid ÷ wagered; null when nothing wagered" }),
};

export const SettlementGameFigures = z
  .object({ gameId: z.number().int().openapi({ example: 1 }), ...figures })
  .openapi("SettlementGameFigures");

export const SettlementReport = z
  .object({
    reportDate: ReportDate,
    status: z.enum(SETTLEMENT_STATUSES).openapi({
      description: "GENERATED on creation; PENDING after an operator reissue; then acknowledged or disputed",
    }),
    ...figures,
    games: z.array(SettlementGameFigures).openapi({
      description: "The same figures per game registered before the day ended (zeros when it had no spins)",
    }),
    generatedAt: Timestamp,
    acknowledgedAt: Timestamp.nullable(),
    disputedAt: Timestamp.nullable(),
    disputeReason: z.string().nullable(),
  })
  .openapi("SettlementReport");

/**
 * KS-4105 for the `reportDate` path parameter, before anything else (the body included): a route
 * middleware runs ahead of the zod validators.
 */
export const reportDatePathGuard: MiddlewareHandler<AppEnv> = async (c, next) => {
  requireReportDate(c.req.param("reportDate"));
  await next();
};

/**
 * KS-4105 for a `reportDate` in a JSON body (a string that is not a calendar day, a number, a day
 * that has not begun). Absent, null or empty is left to the validator (KS-4102 where required).
 * Hono caches the parsed body, so the validator after this reads it again for free.
 */
export const reportDateBodyGuard: MiddlewareHandler<AppEnv> = async (c, next) => {
  const body: unknown = await c.req.json().catch(() => undefined);
  const value = body && typeof body === "object" ? (body as Record<string, unknown>).reportDate : undefined;
  if (value !== undefined && value !== null && value !== "") requireSettleableReportDate(value, new Date());
  await next();
};
