import { z } from "@hono/zod-openapi";
import { requireReportDate, requireSettleableReportDate } from "@outcomes/core";
import { ReportDateSchema } from "@outcomes/records";
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../context.js";

/** The path parameter and guards shared by the partner and operator settlement routes (CONTRACT §8). */

export const ReportDateParams = z.object({
  reportDate: ReportDateSchema.openapi({ param: { name: "reportDate", in: "path" } }),
});

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
