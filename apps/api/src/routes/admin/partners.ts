import { createRoute, z } from "@hono/zod-openapi";
import { EMAIL_MAX_LENGTH, EMAIL_PATTERN, ErrorCode, PARTNER_NAME_MAX_LENGTH, SLUG_PATTERN } from "@outcomes/core";
import { createPartner, listPartners, setPartnerActive } from "@outcomes/db";
import { PartnerSchema, presentPartner } from "@outcomes/records";
import { announceChange } from "../../invalidation.js";
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
