import { createRoute, z } from "@hono/zod-openapi";
import { DISPUTE_REASON_MAX_LENGTH, ErrorCode } from "@outcomes/core";
import { listSettlementReports, requireSettlementReport, transitionSettlementReport } from "@outcomes/db";
import { presentSettlementReport, SettlementReportSchema } from "@outcomes/records";
import type { Context } from "hono";
import type { PartnerAuth } from "../../auth/key-verifier.js";
import type { AppEnv } from "../../context.js";
import { errorResponses, jsonBody, jsonResponse, PARTNER_COMMON_ERRORS } from "../../openapi.js";
import { createRouter } from "../../router.js";
import { pagedListRoute } from "../paged-list.js";
import { ReportDateParams, reportDatePathGuard } from "../settlement-schemas.js";

/**
 * `reason` is required, but checked after the report's status: the specification's table answers
 * KS-4302/KS-4303 for a settled report whatever the request carries. Missing, null or blank is
 * KS-4102; not a string, or longer than the limit, KS-4101.
 */
const DisputeBody = z
  .object({
    reason: z
      .string()
      .nullish()
      .openapi({
        example: "Wagered total differs from our ledger by 12.50 USD",
        description: `Required: free text, 1..${DISPUTE_REASON_MAX_LENGTH} characters (trimmed)`,
      }),
  })
  .openapi("DisputeSettlement");

const tags = ["Settlements"];
const TRANSITION_ERRORS = [
  ...PARTNER_COMMON_ERRORS,
  ErrorCode.InvalidDate,
  ErrorCode.ReportNotFound,
  ErrorCode.ReportAcknowledged,
  ErrorCode.ReportDisputed,
  ErrorCode.ReportStatusConflict,
  ErrorCode.ReportProvisional,
] as const;

export const settlementsRouter = createRouter();

pagedListRoute(settlementsRouter, {
  path: "/settlements",
  operationId: "listSettlements",
  tags,
  summary: "List settlement reports, newest day first",
  schema: { name: "SettlementReportList", key: "reports", item: SettlementReportSchema },
  description: "A page of this environment's reports",
  common: PARTNER_COMMON_ERRORS,
  list: (c, _params, window) => listSettlementReports(c.var.deps.readDb, c.var.partner, window),
  present: presentSettlementReport,
});

settlementsRouter.openapi(
  createRoute({
    method: "get",
    path: "/settlements/{reportDate}",
    operationId: "getSettlement",
    tags,
    summary: "Get the settlement report of a UTC day",
    middleware: [reportDatePathGuard],
    request: { params: ReportDateParams },
    responses: {
      200: jsonResponse(SettlementReportSchema, "The report"),
      ...errorResponses(...PARTNER_COMMON_ERRORS, ErrorCode.InvalidDate, ErrorCode.ReportNotFound),
    },
  }),
  async (c) => {
    const report = await requireSettlementReport(c.var.deps.db, reportKey(c.var.partner, c.req.valid("param")));
    return c.json(presentSettlementReport(report), 200);
  },
);

settlementsRouter.openapi(
  createRoute({
    method: "post",
    path: "/settlements/{reportDate}/acknowledge",
    operationId: "acknowledgeSettlement",
    tags,
    summary: "Acknowledge a final GENERATED or PENDING report; it can no longer change",
    description:
      "A provisional report (its UTC day has not ended, or no run has made it final yet) is 409 KS-4305, with the " +
      "day's end in the message.",
    middleware: [reportDatePathGuard],
    request: { params: ReportDateParams },
    responses: {
      200: jsonResponse(SettlementReportSchema, "The acknowledged report"),
      ...errorResponses(...TRANSITION_ERRORS),
    },
  }),
  async (c) => {
    const key = reportKey(c.var.partner, c.req.valid("param"));
    const report = await transitionSettlementReport(c.var.deps.db, key, { type: "acknowledge" }, await rules(c));
    return c.json(presentSettlementReport(report), 200);
  },
);

settlementsRouter.openapi(
  createRoute({
    method: "post",
    path: "/settlements/{reportDate}/dispute",
    operationId: "disputeSettlement",
    tags,
    summary: "Dispute a final GENERATED or PENDING report, with a reason; the operator reissues it",
    description: "A provisional report is 409 KS-4305, as for acknowledge.",
    middleware: [reportDatePathGuard],
    request: {
      params: ReportDateParams,
      body: jsonBody(DisputeBody, { reason: "Wagered total differs from our ledger by 12.50 USD" }),
    },
    responses: {
      200: jsonResponse(SettlementReportSchema, "The disputed report"),
      ...errorResponses(...TRANSITION_ERRORS, ErrorCode.InvalidRequest, ErrorCode.RequiredFieldMissing),
    },
  }),
  async (c) => {
    const key = reportKey(c.var.partner, c.req.valid("param"));
    const { reason } = c.req.valid("json");
    const report = await transitionSettlementReport(c.var.deps.db, key, { type: "dispute", reason }, await rules(c));
    return c.json(presentSettlementReport(report), 200);
  },
);

/** KS-4305 for provisional reports once release 2 (which accepts them) runs nowhere. */
async function rules(c: Context<AppEnv>) {
  return { refuseProvisional: await c.var.deps.rollout.on("provisional-settlements") };
}

function reportKey(partner: PartnerAuth, params: { reportDate: string }) {
  return { partnerId: partner.partnerId, environment: partner.environment, reportDate: params.reportDate };
}
