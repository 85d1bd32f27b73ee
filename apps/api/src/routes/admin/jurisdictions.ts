import { createRoute, z } from "@hono/zod-openapi";
import { ErrorCode, JURISDICTION_CODE_PATTERN, usdToMicros } from "@outcomes/core";
import { putJurisdiction } from "@outcomes/db";
import { JurisdictionSchema, presentJurisdiction } from "@outcomes/records";
import { gated } from "../../middleware/gated.js";
import { ADMIN_COMMON_ERRORS, errorResponses, jsonBody, jsonResponse } from "../../openapi.js";
import { createRouter } from "../../router.js";
import { positiveUsd } from "../partner/protection.js";

const CodeParams = z.object({
  code: z
    .string()
    .regex(JURISDICTION_CODE_PATTERN, "2..32 of A-Z, 0-9 and -")
    .openapi({ param: { name: "code", in: "path" }, example: "UK-GC" }),
});

const JurisdictionBody = z
  .strictObject({
    name: z.string().trim().min(1).max(200).openapi({ example: "Great Britain (UK Gambling Commission RTS)" }),
    minRoundMs: z.number().int().min(0).max(60_000).openapi({ example: 2500 }),
    maxWagerUsd: positiveUsd.nullable().openapi({ example: null }),
    sessionReminderMinutes: z.number().int().min(1).max(1440).nullable().openapi({ example: 60 }),
  })
  .openapi("PutJurisdiction", { description: "The whole profile: a built-in's figures change, it stays built in." });

export const adminJurisdictionsRouter = createRouter().openapi(
  createRoute({
    method: "put",
    path: "/jurisdictions/{code}",
    operationId: "putJurisdiction",
    tags: ["Operator: jurisdictions"],
    summary: "Define a jurisdiction profile or change its figures",
    description:
      "Spins follow the new figures at once. Available once `release finish` has run for release 3 (until then 404 KS-4215).",
    middleware: [gated("jurisdictions")],
    request: {
      params: CodeParams,
      body: jsonBody(JurisdictionBody, {
        name: "Great Britain (UK Gambling Commission RTS)",
        minRoundMs: 2500,
        maxWagerUsd: null,
        sessionReminderMinutes: 60,
      }),
    },
    responses: {
      200: jsonResponse(JurisdictionSchema, "The profile"),
      ...errorResponses(...ADMIN_COMMON_ERRORS, ErrorCode.InvalidRequest, ErrorCode.NotFound),
    },
  }),
  async (c) => {
    const { maxWagerUsd, ...figures } = c.req.valid("json");
    const row = await putJurisdiction(c.var.deps.db, c.req.valid("param").code, {
      ...figures,
      maxWagerMicros: maxWagerUsd === null ? null : usdToMicros(maxWagerUsd),
    });
    return c.json(presentJurisdiction(row), 200);
  },
);
