import { createRoute } from "@hono/zod-openapi";
import { ErrorCode } from "@outcomes/core";
import { decideParSheet } from "@outcomes/db";
import { OperatorParSheetSchema, presentOperatorParSheet } from "@outcomes/records";
import { ADMIN_COMMON_ERRORS, errorResponses, jsonResponse } from "../../openapi.js";
import { createRouter } from "../../router.js";
import { ParSheetParams } from "../partner/par-sheets.js";

const tags = ["Operator: PAR sheets"];

export const adminParSheetsRouter = createRouter();

adminParSheetsRouter.openapi(
  createRoute({
    method: "post",
    path: "/par-sheets/{parSheetId}/approve",
    operationId: "approveParSheet",
    tags,
    summary: "Approve a PAR sheet (PENDING_APPROVAL → ACTIVE)",
    description: "Approving an ACTIVE sheet changes nothing. A RETIRED sheet cannot be approved (400 KS-4208).",
    request: { params: ParSheetParams },
    responses: {
      200: jsonResponse(OperatorParSheetSchema, "The sheet"),
      ...errorResponses(...ADMIN_COMMON_ERRORS, ErrorCode.ParSheetNotFound, ErrorCode.ParSheetNotActive),
    },
  }),
  async (c) =>
    c.json(
      presentOperatorParSheet(await decideParSheet(c.var.deps.db, c.req.valid("param").parSheetId, "approve")),
      200,
    ),
);

adminParSheetsRouter.openapi(
  createRoute({
    method: "post",
    path: "/par-sheets/{parSheetId}/retire",
    operationId: "retireParSheet",
    tags,
    summary: "Retire a PAR sheet (→ RETIRED, final)",
    description:
      "No new game can be registered from it (KS-4208); games already registered keep running. Repeating it is " +
      "harmless.",
    request: { params: ParSheetParams },
    responses: {
      200: jsonResponse(OperatorParSheetSchema, "The sheet"),
      ...errorResponses(...ADMIN_COMMON_ERRORS, ErrorCode.ParSheetNotFound),
    },
  }),
  async (c) =>
    c.json(
      presentOperatorParSheet(await decideParSheet(c.var.deps.db, c.req.valid("param").parSheetId, "retire")),
      200,
    ),
);
