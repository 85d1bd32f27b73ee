import { createRoute, z } from "@hono/zod-openapi";
import {
  analyzeParSheet,
  DRAW_MODES,
  jsonPath,
  PAR_SHEET_STATUSES,
  ParSheetDocumentSchema,
  ServiceError,
} from "@outcomes/core";
import { insertParSheet, listParSheets, presentParSheet, requireOwnParSheet } from "@outcomes/db";
import type { MiddlewareHandler } from "hono";
import type { ZodError } from "zod";
import type { AppEnv } from "../../context.js";
import {
  errorResponses,
  jsonBody,
  jsonResponse,
  PARTNER_COMMON_ERRORS,
  PageFields,
  PageQuery,
  pageFields,
  pageWindow,
  Timestamp,
} from "../../openapi.js";
import { createRouter } from "../../router.js";

const tags = ["PAR sheets"];

export const ParSheet = z
  .object({
    id: z.string().openapi({ example: "par_0Nf3kQ2h7yXwz3KpL0aBcDeFg1" }),
    name: z.string(),
    version: z.string(),
    status: z.enum(PAR_SHEET_STATUSES),
    drawMode: z.enum(DRAW_MODES),
    rtp: z.number().openapi({ description: "Σ weight × multiplier / cycle, exact (12 places if it does not end)" }),
    certifiedRtp: z.number(),
    hitFrequency: z.number().openapi({ description: "Share of the cycle that is not T0" }),
    volatility: z.number().openapi({ description: "Standard deviation of the multiplier" }),
    createdAt: Timestamp,
    approvedAt: Timestamp.nullable(),
    retiredAt: Timestamp.nullable(),
  })
  .openapi("ParSheet");

const ParSheetWithDocument = ParSheet.extend({
  document: z.record(z.string(), z.unknown()).openapi({ description: "The document as uploaded" }),
}).openapi("ParSheetWithDocument");

const ParSheetList = z.object({ parSheets: z.array(ParSheet), ...PageFields }).openapi("ParSheetList");

export const ParSheetParams = z.object({ parSheetId: z.string() });

/** Reads the raw body first, so the document is stored exactly as it was sent. */
const keepRawBody: MiddlewareHandler<AppEnv> = async (c, next) => {
  await c.req.text();
  await next();
};

/** Every document problem is KS-4104 (the contract's more specific code), missing fields included. */
function documentHook(result: { success: true } | { success: false; error: ZodError }): undefined {
  if (result.success) return undefined;
  const details = result.error.issues.map((issue) => ({ path: jsonPath(issue.path), message: issue.message }));
  throw new ServiceError("KS-4104", { details });
}

export const parSheetsRouter = createRouter();

parSheetsRouter.openapi(
  createRoute({
    method: "post",
    path: "/par-sheets",
    tags,
    summary: "Upload a PAR sheet",
    description:
      "Checks the document completely (schema, exact RTP within 0.00005 of certifiedRtp, tier names T0..Tn, " +
      "combinations, the 1 in 100 million tier floor) and answers every problem at once in `details` " +
      "(400 KS-4104). A sandbox sheet is ACTIVE at once; a production sheet is PENDING_APPROVAL until an " +
      "operator approves it. Unknown top-level fields are kept in the stored document and otherwise ignored.",
    middleware: [keepRawBody] as const,
    request: { body: jsonBody(ParSheetDocumentSchema) },
    responses: {
      201: jsonResponse(ParSheet, "The stored sheet and its figures"),
      ...errorResponses(...PARTNER_COMMON_ERRORS, "KS-4101", "KS-4104"),
    },
  }),
  async (c) => {
    const { deps, partner } = c.var;
    const raw = await c.req.text();
    const check = analyzeParSheet(JSON.parse(raw));
    if (!check.ok) throw new ServiceError("KS-4104", { details: check.details });
    const record = await insertParSheet(deps.db, partner, check.sheet, raw);
    return c.json(presentParSheet(record), 201);
  },
  documentHook,
);

parSheetsRouter.openapi(
  createRoute({
    method: "get",
    path: "/par-sheets",
    tags,
    summary: "List PAR sheets, newest first",
    request: { query: PageQuery },
    responses: {
      200: jsonResponse(ParSheetList, "A page of sheets"),
      ...errorResponses(...PARTNER_COMMON_ERRORS, "KS-4101"),
    },
  }),
  async (c) => {
    const page = c.req.valid("query");
    const result = await listParSheets(c.var.deps.db, c.var.partner, pageWindow(page));
    return c.json({ parSheets: result.rows.map(presentParSheet), ...pageFields(page, result.total) }, 200);
  },
);

parSheetsRouter.openapi(
  createRoute({
    method: "get",
    path: "/par-sheets/{parSheetId}",
    tags,
    summary: "Get a PAR sheet with its document",
    request: { params: ParSheetParams },
    responses: {
      200: jsonResponse(ParSheetWithDocument, "The sheet"),
      ...errorResponses(...PARTNER_COMMON_ERRORS, "KS-4205"),
    },
  }),
  async (c) => {
    const record = await requireOwnParSheet(c.var.deps.db, c.var.partner, c.req.valid("param").parSheetId);
    return c.json({ ...presentParSheet(record), document: record.document as Record<string, unknown> }, 200);
  },
);
