import { createRoute, z } from "@hono/zod-openapi";
import {
  EMAIL_MAX_LENGTH,
  EMAIL_PATTERN,
  ErrorCode,
  PARTNER_NAME_MAX_LENGTH,
  ServiceError,
  SLUG_PATTERN,
  usdToMicros,
} from "@outcomes/core";
import { createPartner, findJurisdiction, listPartners, setPartnerActive, updatePartnerSettings } from "@outcomes/db";
import { PartnerSchema, presentPartner } from "@outcomes/records";
import type { AppDeps } from "../../context.js";
import { announceChange } from "../../invalidation.js";
import { gated } from "../../middleware/gated.js";
import { ADMIN_COMMON_ERRORS, errorResponses, jsonBody, jsonResponse } from "../../openapi.js";
import { createRouter } from "../../router.js";
import { pagedListRoute } from "../paged-list.js";
import { PartnerParams } from "./schemas.js";

const CreatePartnerBody = z
  .strictObject({
    slug: z.string().regex(SLUG_PATTERN).openapi({
      example: "acme",
      description: "3..64 lowercase letters, digits and hyphens, starting and ending with a letter or digit",
    }),
    name: z.string().trim().min(1).max(PARTNER_NAME_MAX_LENGTH).openapi({ example: "Acme Gaming" }),
    contactEmail: z
      .string()
      .max(EMAIL_MAX_LENGTH)
      .regex(EMAIL_PATTERN)
      .nullish()
      .openapi({ format: "email", example: "ops@acme.example" }),
  })
  .openapi("CreatePartner");

const UpdatePartnerBody = z
  .strictObject({
    spinCeilingUsd: z
      .number()
      .positive("must be positive")
      .refine(
        (usd) => usdToMicros(usd) !== null,
        "at most 6 decimals, and at most 9007199254.740991 (2^53 − 1 micro-USD)",
      )
      .nullable()
      .optional()
      .openapi({
        example: 5_000_000,
        description:
          "The most one spin of the partner's games may stake or pay, in USD; null restores the default (1000000). " +
          "It binds games registered or re-bounded from now on: existing games keep their maxWagerUsd",
      }),
    defaultJurisdiction: z
      .string()
      .optional()
      .openapi({
        example: "UK-GC",
        description:
          "The jurisdiction profile (`GET /api/partner/v1/jurisdictions`) of the partner's players without one of " +
          "their own; initially NONE. Accepted once `release finish` has run for release 3 (until then 400 KS-4101)",
      }),
  })
  .openapi("UpdatePartner", { description: "Only the fields sent change; unknown fields are refused (KS-4101)." });

const tags = ["Operator: partners"];

export const partnersRouter = createRouter();

partnersRouter.openapi(
  createRoute({
    method: "post",
    path: "/partners",
    operationId: "createPartner",
    tags,
    summary: "Create a partner",
    request: {
      body: jsonBody(CreatePartnerBody, { slug: "acme", name: "Acme Gaming", contactEmail: "ops@acme.example" }),
    },
    responses: {
      201: jsonResponse(PartnerSchema, "The new, active partner"),
      ...errorResponses(
        ...ADMIN_COMMON_ERRORS,
        ErrorCode.InvalidRequest,
        ErrorCode.RequiredFieldMissing,
        ErrorCode.PartnerSlugTaken,
        ErrorCode.PartnerCreationFailed,
      ),
    },
  }),
  async (c) => {
    const partner = await createPartner(c.var.deps.db, c.req.valid("json"));
    await announceChange(c.var.deps, "auth");
    return c.json(presentPartner(partner), 201);
  },
);

pagedListRoute(partnersRouter, {
  path: "/partners",
  operationId: "listPartners",
  tags,
  summary: "List partners, newest first",
  schema: { name: "PartnerList", key: "partners", item: PartnerSchema },
  description: "A page of partners",
  common: ADMIN_COMMON_ERRORS,
  list: (c, _params, window) => listPartners(c.var.deps.db, window),
  present: presentPartner,
});

for (const action of ["deactivate", "activate"] as const) {
  partnersRouter.openapi(
    createRoute({
      method: "post",
      path: `/partners/{partnerId}/${action}`,
      operationId: `${action}Partner`,
      tags,
      summary:
        action === "deactivate"
          ? "Deactivate a partner: its keys answer KS-4005 on every API process within 1 s"
          : "Re-activate a deactivated partner",
      request: { params: PartnerParams },
      responses: {
        200: jsonResponse(PartnerSchema, "The partner; repeating the call is harmless"),
        ...errorResponses(...ADMIN_COMMON_ERRORS, ErrorCode.PartnerNotFound),
      },
    }),
    async (c) => {
      const partner = await setPartnerActive(c.var.deps.db, c.req.valid("param").partnerId, action === "activate");
      await announceChange(c.var.deps, "auth");
      return c.json(presentPartner(partner), 200);
    },
  );
}

partnersRouter.openapi(
  createRoute({
    method: "patch",
    path: "/partners/{partnerId}",
    operationId: "updatePartner",
    tags,
    summary: "Change a partner's settings (its spin ceiling, its default jurisdiction)",
    description:
      "Available once `release finish` has run for release 3 (until then 404 KS-4215, as release 2 answers).",
    middleware: [gated("partner-spin-ceiling")],
    request: { params: PartnerParams, body: jsonBody(UpdatePartnerBody, { spinCeilingUsd: 5_000_000 }) },
    responses: {
      200: jsonResponse(PartnerSchema, "The partner"),
      ...errorResponses(
        ...ADMIN_COMMON_ERRORS,
        ErrorCode.InvalidRequest,
        ErrorCode.PartnerNotFound,
        ErrorCode.NotFound,
      ),
    },
  }),
  async (c) => {
    const { spinCeilingUsd, defaultJurisdiction } = c.req.valid("json");
    const { deps } = c.var;
    if (defaultJurisdiction !== undefined) await requireJurisdiction(deps, defaultJurisdiction);
    const spinCeilingMicros =
      spinCeilingUsd === undefined || spinCeilingUsd === null ? spinCeilingUsd : usdToMicros(spinCeilingUsd);
    const partner = await updatePartnerSettings(deps.db, c.req.valid("param").partnerId, {
      spinCeilingMicros,
      defaultJurisdiction,
    });
    // Whether the partner's spins are checked follows its default (PartnerAuth.checked).
    if (defaultJurisdiction !== undefined) await announceChange(deps, "auth");
    return c.json(presentPartner(partner), 200);
  },
);

/** An existing profile's code, once the jurisdictions gate is open; else 400 KS-4101 (as release 2 answers the field). */
async function requireJurisdiction(deps: AppDeps, code: string): Promise<void> {
  const open = await deps.rollout.on("jurisdictions");
  if (!open || !(await findJurisdiction(deps.db, code))) {
    throw new ServiceError(ErrorCode.InvalidRequest, {
      details: [
        { path: "defaultJurisdiction", message: open ? "no such profile" : "not accepted before release 3 finishes" },
      ],
    });
  }
}
