import { createRoute, z } from "@hono/zod-openapi";
import {
  analyzeParSheet,
  ErrorCode,
  jsonPath,
  ParSheetDocumentSchema,
  SAMPLE_PAR_SHEET,
  ServiceError,
} from "@outcomes/core";
import { insertParSheet, listParSheets, requireOwnParSheet } from "@outcomes/db";
import {
  ParSheetSchema,
  ParSheetWithDocumentSchema,
  presentParSheet,
  presentParSheetWithDocument,
} from "@outcomes/records";
import type { MiddlewareHandler } from "hono";
import stableStringify from "safe-stable-stringify";
import type { ZodError } from "zod";
import type { AppEnv } from "../../context.js";
import { keyedRequest } from "../../idempotency.js";
import { errorResponses, jsonBody, jsonResponse, PARTNER_COMMON_ERRORS } from "../../openapi.js";
import { createRouter } from "../../router.js";
import { createKeyOf, gatedKeyHeader, markReplay } from "../keyed-create.js";
import { pagedListRoute } from "../paged-list.js";

const tags = ["PAR sheets"];

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
  throw new ServiceError(ErrorCode.InvalidParSheet, { details });
}

export const parSheetsRouter = createRouter();

parSheetsRouter.openapi(
  createRoute({
    method: "post",
    path: "/par-sheets",
    operationId: "uploadParSheet",
    tags,
    summary: "Upload a PAR sheet",
    description:
      "Checks the document completely (schema, exact RTP within 0.00005 of certifiedRtp, tier names T0..Tn, " +
      "combinations, the 1 in 100 million tier floor) and answers every problem at once in `details` " +
      "(400 KS-4104). A sandbox sheet is ACTIVE at once; a production sheet is PENDING_APPROVAL until an " +
      "operator approves it. Unknown top-level fields are kept in the stored document and otherwise ignored. " +
      "With `Idempotency-Key` (kept 24 h per partner and environment) a repeat of the same document (whitespace " +
      "and key order aside) answers the first sheet as first answered (`Idempotent-Replayed: true`) and stores " +
      "nothing more; another document with the key is KS-4101.",
    middleware: [keepRawBody] as const,
    request: { headers: gatedKeyHeader("PAR sheet"), body: jsonBody(ParSheetDocumentSchema, SAMPLE_PAR_SHEET) },
    responses: {
      201: jsonResponse(ParSheetSchema, "The stored sheet and its figures"),
      ...errorResponses(...PARTNER_COMMON_ERRORS, ErrorCode.InvalidRequest, ErrorCode.InvalidParSheet),
    },
  }),
  async (c) => {
    const { deps, partner } = c.var;
    const raw = await c.req.text();
    const document: unknown = JSON.parse(raw);
    const key = await createKeyOf(c, "PAR sheet", "keyed-creates");
    const created = await deps.creates.createOnce({
      // The document as understood: parsed, its keys in one order (whitespace and key order are not the request).
      key: keyedRequest(partner, key, { route: "POST /par-sheets", document: stableStringify(document) ?? "" }),
      admit: async () => {
        const check = analyzeParSheet(document);
        if (!check.ok) throw new ServiceError(ErrorCode.InvalidParSheet, { details: check.details });
        return (tx) => insertParSheet(tx, partner, check.sheet, raw);
      },
      present: presentParSheet,
      replay: (stored) => ParSheetSchema.parse(stored),
    });
    markReplay(c, created);
    return c.json(created.body, 201);
  },
  documentHook,
);

pagedListRoute(parSheetsRouter, {
  path: "/par-sheets",
  operationId: "listParSheets",
  tags,
  summary: "List PAR sheets, newest first",
  schema: { name: "ParSheetList", key: "parSheets", item: ParSheetSchema },
  description: "A page of sheets",
  common: PARTNER_COMMON_ERRORS,
  list: (c, _params, window) => listParSheets(c.var.deps.db, c.var.partner, window),
  present: presentParSheet,
});

parSheetsRouter.openapi(
  createRoute({
    method: "get",
    path: "/par-sheets/{parSheetId}",
    operationId: "getParSheet",
    tags,
    summary: "Get a PAR sheet with its document",
    request: { params: ParSheetParams },
    responses: {
      200: jsonResponse(ParSheetWithDocumentSchema, "The sheet"),
      ...errorResponses(...PARTNER_COMMON_ERRORS, ErrorCode.ParSheetNotFound),
    },
  }),
  async (c) => {
    const record = await requireOwnParSheet(c.var.deps.db, c.var.partner, c.req.valid("param").parSheetId);
    return c.json(presentParSheetWithDocument(record), 200);
  },
);
