import { createRoute, z } from "@hono/zod-openapi";
import { ErrorCode } from "@outcomes/core";
import { operatorGenerateSettlement, operatorReissueSettlement } from "@outcomes/db";
import { notifyEvents } from "@outcomes/queue";
import {
  EnvironmentSchema,
  presentSettlementReport,
  ReportDateSchema,
  SettlementReportSchema,
} from "@outcomes/records";
import { ADMIN_COMMON_ERRORS, errorResponses, jsonBody, jsonResponse } from "../../openapi.js";
import { createRouter } from "../../router.js";
import { ReportDateParams, reportDateBodyGuard, reportDatePathGuard } from "../settlement-schemas.js";
import { PartnerParams } from "./schemas.js";

const GenerateBody = z
  .strictObject({
    reportDate: ReportDateSchema.openapi({ description: "The UTC day to settle, up to today; KS-4105 otherwise" }),
    environment: EnvironmentSchema,
  })
  .openapi("GenerateSettlement");

const ReissueBody = z.strictObject({ environment: EnvironmentSchema }).openapi("ReissueSettlement");

const tags = ["Operator: settlements"];

export const adminSettlementsRouter = createRouter();

/** What generating or reissuing a partner's report can answer besides its success (a bad body or date, an unknown partner). */
const REPORT_COMMAND_ERRORS: ErrorCode[] = [
  ...ADMIN_COMMON_ERRORS,
  ErrorCode.InvalidRequest,
  ErrorCode.RequiredFieldMissing,
  ErrorCode.InvalidDate,
  ErrorCode.PartnerNotFound,
];

adminSettlementsRouter.openapi(
  createRoute({
    method: "post",
    path: "/partners/{partnerId}/settlements",
    operationId: "generateSettlement",
    tags,
    summary: "Generate (or refresh) a partner's report of a UTC day",
    description:
      "Creates the report as GENERATED, or replaces the figures of a GENERATED or PENDING one (the " +
      "`settlement.report_ready` event follows whenever the figures are new). An acknowledged or disputed " +
      "report is never changed: 409 KS-4304.",
    middleware: [reportDateBodyGuard],
    request: {
      params: PartnerParams,
      body: jsonBody(GenerateBody, { reportDate: "2026-05-01", environment: "sandbox" }),
    },
    responses: {
      201: jsonResponse(SettlementReportSchema, "The report"),
      ...errorResponses(
        ...REPORT_COMMAND_ERRORS,
        ErrorCode.NoGamesRegistered,
        ErrorCode.ReportStatusConflict,
        ErrorCode.ReportGenerationFailed,
      ),
    },
  }),
  async (c) => {
    const { db, producers } = c.var.deps;
    const { partnerId } = c.req.valid("param");
    const { reportDate, environment } = c.req.valid("json");
    const result = await operatorGenerateSettlement(db, { partnerId, environment, reportDate });
    if (result.outcome === "created" || result.outcome === "updated") await notifyEvents(producers);
    return c.json(presentSettlementReport(result.report), 201);
  },
);

adminSettlementsRouter.openapi(
  createRoute({
    method: "post",
    path: "/partners/{partnerId}/settlements/{reportDate}/reissue",
    operationId: "reissueSettlement",
    tags,
    summary: "Resolve a dispute: recompute a disputed report, which becomes PENDING",
    middleware: [reportDatePathGuard],
    request: { params: PartnerParams.merge(ReportDateParams), body: jsonBody(ReissueBody, { environment: "sandbox" }) },
    responses: {
      200: jsonResponse(SettlementReportSchema, "The reissued report"),
      ...errorResponses(
        ...REPORT_COMMAND_ERRORS,
        ErrorCode.ReportNotFound,
        ErrorCode.ReportStatusConflict,
        ErrorCode.ReportGenerationFailed,
      ),
    },
  }),
  async (c) => {
    const { db, producers } = c.var.deps;
    const { partnerId, reportDate } = c.req.valid("param");
    const { environment } = c.req.valid("json");
    const report = await operatorReissueSettlement(db, { partnerId, environment, reportDate });
    await notifyEvents(producers);
    return c.json(presentSettlementReport(report), 200);
  },
);
