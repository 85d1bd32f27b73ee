import { createRoute, z } from "@hono/zod-openapi";
import { DEFAULT_ROTATION_OVERLAP_HOURS, ErrorCode, MAX_ROTATION_OVERLAP_HOURS } from "@outcomes/core";
import { issueApiKey, listApiKeys, revokeApiKey, rotateApiKey } from "@outcomes/db";
import {
  ApiKeySchema,
  EnvironmentSchema,
  IssuedApiKeySchema,
  presentApiKey,
  presentIssuedKey,
} from "@outcomes/records";
import { announceKeyChange } from "../../invalidation.js";
import { ADMIN_COMMON_ERRORS, errorResponses, jsonBody, jsonResponse, optionalJsonBody } from "../../openapi.js";
import { createRouter } from "../../router.js";
import { pagedListRoute } from "../paged-list.js";
import { FutureTimestamp, PartnerKeyParams, PartnerParams } from "./schemas.js";

const IssueKeyBody = z
  .strictObject({
    environment: EnvironmentSchema,
    expiresAt: FutureTimestamp.optional().openapi({ description: "Default: 365 days from now" }),
  })
  .openapi("IssueApiKey");

const RotateKeyBody = z
  .strictObject({
    overlapHours: z
      .number()
      .min(0)
      .max(MAX_ROTATION_OVERLAP_HOURS)
      .optional()
      .openapi({
        example: DEFAULT_ROTATION_OVERLAP_HOURS,
        description: `How long the old key keeps working (default ${DEFAULT_ROTATION_OVERLAP_HOURS}); never lengthens its life`,
      }),
    expiresAt: FutureTimestamp.optional().openapi({ description: "The new key's expiry; default 365 days from now" }),
  })
  .openapi("RotateApiKey");

const tags = ["Operator: API keys"];
const parseDate = (text: string | undefined) => (text === undefined ? undefined : new Date(text));

export const apiKeysRouter = createRouter();

apiKeysRouter.openapi(
  createRoute({
    method: "post",
    path: "/partners/{partnerId}/api-keys",
    operationId: "issueApiKey",
    tags,
    summary: "Issue an API key (the whole key is shown once, in this answer)",
    request: { params: PartnerParams, body: jsonBody(IssueKeyBody, { environment: "sandbox" }) },
    responses: {
      201: jsonResponse(IssuedApiKeySchema, "The new key"),
      ...errorResponses(
        ...ADMIN_COMMON_ERRORS,
        ErrorCode.InvalidRequest,
        ErrorCode.RequiredFieldMissing,
        ErrorCode.PartnerNotFound,
        ErrorCode.PartnerInactive,
        ErrorCode.KeyIssueFailed,
      ),
    },
  }),
  async (c) => {
    const body = c.req.valid("json");
    const issued = await issueApiKey(c.var.deps.db, {
      partnerId: c.req.valid("param").partnerId,
      environment: body.environment,
      expiresAt: parseDate(body.expiresAt),
    });
    await announceKeyChange(c.var.deps, { live: [issued.record] });
    return c.json(presentIssuedKey(issued), 201);
  },
);

pagedListRoute(apiKeysRouter, {
  path: "/partners/{partnerId}/api-keys",
  operationId: "listApiKeys",
  tags,
  summary: "List a partner's keys, newest first (never their secrets)",
  params: PartnerParams,
  schema: { name: "ApiKeyList", key: "apiKeys", item: ApiKeySchema },
  description: "A page of keys, revoked and expired ones included",
  common: ADMIN_COMMON_ERRORS,
  errors: [ErrorCode.PartnerNotFound],
  list: (c, params, window) => listApiKeys(c.var.deps.db, params.partnerId, window),
  present: presentApiKey,
});

apiKeysRouter.openapi(
  createRoute({
    method: "post",
    path: "/partners/{partnerId}/api-keys/{keyId}/revoke",
    operationId: "revokeApiKey",
    tags,
    summary: "Revoke a key: it answers KS-4003 on every API process within 1 s",
    request: { params: PartnerKeyParams },
    responses: {
      200: jsonResponse(ApiKeySchema, "The revoked key; repeating the call keeps the first revokedAt"),
      ...errorResponses(
        ...ADMIN_COMMON_ERRORS,
        ErrorCode.PartnerNotFound,
        ErrorCode.ApiKeyNotFound,
        ErrorCode.ApiKeyNotOwned,
      ),
    },
  }),
  async (c) => {
    const { partnerId, keyId } = c.req.valid("param");
    const revoked = await revokeApiKey(c.var.deps.db, partnerId, keyId);
    await announceKeyChange(c.var.deps, { gone: [revoked.keyHash] });
    return c.json(presentApiKey(revoked), 200);
  },
);

apiKeysRouter.openapi(
  createRoute({
    method: "post",
    path: "/partners/{partnerId}/api-keys/{keyId}/rotate",
    operationId: "rotateApiKey",
    tags,
    summary: "Rotate a key: a new key of the same environment; the old one expires after the overlap",
    request: {
      params: PartnerKeyParams,
      body: optionalJsonBody(RotateKeyBody, { overlapHours: DEFAULT_ROTATION_OVERLAP_HOURS }),
    },
    responses: {
      201: jsonResponse(IssuedApiKeySchema, "The new key"),
      ...errorResponses(
        ...ADMIN_COMMON_ERRORS,
        ErrorCode.InvalidRequest,
        ErrorCode.PartnerNotFound,
        ErrorCode.PartnerInactive,
        ErrorCode.ApiKeyNotFound,
        ErrorCode.ApiKeyNotOwned,
        ErrorCode.KeyIssueFailed,
      ),
    },
  }),
  async (c) => {
    const { partnerId, keyId } = c.req.valid("param");
    const body = c.req.valid("json");
    const rotated = await rotateApiKey(c.var.deps.db, {
      partnerId,
      keyId,
      overlapHours: body.overlapHours,
      expiresAt: parseDate(body.expiresAt),
    });
    // The old key's life was shortened to the overlap: its listing follows.
    await announceKeyChange(c.var.deps, { live: [rotated.record, rotated.previous] });
    return c.json(presentIssuedKey(rotated), 201);
  },
);
