import { createRoute, z } from "@hono/zod-openapi";
import { ErrorCode, type ProtectionSettingName, ServiceError, type SettingValue, usdToMicros } from "@outcomes/core";
import { findJurisdiction, findProtection, listJurisdictions, putProtection } from "@outcomes/db";
import { JurisdictionSchema, ProtectionSchema, presentJurisdiction, presentProtection } from "@outcomes/records";
import type { Context } from "hono";
import type { AppEnv } from "../../context.js";
import { announceChange } from "../../invalidation.js";
import { gated } from "../../middleware/gated.js";
import { errorResponses, jsonBody, jsonResponse, PARTNER_COMMON_ERRORS } from "../../openapi.js";
import { createRouter } from "../../router.js";
import { PLAYER_ID_PATTERN } from "./spin-json.js";

/** A positive amount of USD that is an exact number of micro-USD: a limit or a profile's stake. */
export const positiveUsd = z
  .number()
  .positive("must be positive")
  .refine((usd) => usdToMicros(usd) !== null, "at most 6 decimals, and at most 9007199254.740991");

const limitUsd = positiveUsd.nullable().optional();
const PeriodLimitsBody = z.strictObject({ daily: limitUsd, weekly: limitUsd, monthly: limitUsd });
const until = z.iso.datetime({ offset: true }).nullable().optional().openapi({ format: "date-time" });

const ProtectionBody = z
  .strictObject({
    jurisdiction: z.string().nullable().optional().openapi({
      example: "UK-GC",
      description: "A profile's code (`GET /jurisdictions`); null: the partner's default",
    }),
    selfExcludedUntil: until,
    coolingOffUntil: until,
    lossLimitUsd: PeriodLimitsBody.optional(),
    wagerLimitUsd: PeriodLimitsBody.optional(),
  })
  .openapi("PutPlayerProtection", {
    description:
      "Only the fields sent change. Lowering a limit, or starting or lengthening an exclusion, takes effect at " +
      "once; raising or removing a limit, or ending an exclusion early, 24 h later (`pendingChanges`).",
  });

const PlayerParams = z.object({
  playerId: z.string().openapi({ param: { name: "playerId", in: "path" }, example: "player-42" }),
});

const tags = ["Player protection"];
const gate = "jurisdictions" as const;
const availability =
  "Available once `release finish` has run for release 3 (until then 404 KS-4215, as release 2 answers).";

const listRoute = createRoute({
  method: "get",
  path: "/jurisdictions",
  operationId: "listJurisdictions",
  tags,
  summary: "List jurisdiction profiles (built-in and the operator's)",
  description: availability,
  middleware: [gated(gate)],
  responses: {
    200: jsonResponse(z.object({ jurisdictions: z.array(JurisdictionSchema) }), "Every profile, by code"),
    ...errorResponses(...PARTNER_COMMON_ERRORS, ErrorCode.NotFound),
  },
});

const getRoute = createRoute({
  method: "get",
  path: "/players/{playerId}/protection",
  operationId: "getPlayerProtection",
  tags,
  summary: "Read a player's jurisdiction, exclusions and limits",
  description: `A player never set answers his partner's default and no limit. ${availability}`,
  middleware: [gated(gate)],
  request: { params: PlayerParams },
  responses: {
    200: jsonResponse(ProtectionSchema, "The protection in force and the changes waiting"),
    ...errorResponses(...PARTNER_COMMON_ERRORS, ErrorCode.PlayerNotFound, ErrorCode.NotFound),
  },
});

const putRoute = createRoute({
  method: "put",
  path: "/players/{playerId}/protection",
  operationId: "putPlayerProtection",
  tags,
  summary: "Set a player's jurisdiction, exclusions and limits",
  description: `A player may be set before his first spin. ${availability}`,
  middleware: [gated(gate)],
  request: {
    params: PlayerParams,
    body: jsonBody(ProtectionBody, { jurisdiction: "UK-GC", lossLimitUsd: { daily: 10 } }),
  },
  responses: {
    200: jsonResponse(ProtectionSchema, "The protection in force and the changes waiting"),
    ...errorResponses(
      ...PARTNER_COMMON_ERRORS,
      ErrorCode.InvalidRequest,
      ErrorCode.RequiredFieldMissing,
      ErrorCode.PlayerNotFound,
      ErrorCode.NotFound,
    ),
  },
});

function playerIdOf(c: Context<AppEnv>): string {
  const { playerId } = c.req.param() as { playerId: string };
  // An id no spin could have created names no player (and U+0000 must not reach Postgres).
  if (!PLAYER_ID_PATTERN.test(playerId)) throw new ServiceError(ErrorCode.PlayerNotFound);
  return playerId;
}

const micros = (usd: number | null | undefined): SettingValue | undefined =>
  usd === undefined ? undefined : usd === null ? null : usdToMicros(usd);
const epochOf = (at: string | null | undefined): SettingValue | undefined =>
  at === undefined ? undefined : at === null ? null : Date.parse(at);

function settingsOf(body: z.infer<typeof ProtectionBody>): Partial<Record<ProtectionSettingName, SettingValue>> {
  const asked: Record<ProtectionSettingName, SettingValue | undefined> = {
    selfExcludedUntil: epochOf(body.selfExcludedUntil),
    coolingOffUntil: epochOf(body.coolingOffUntil),
    lossDaily: micros(body.lossLimitUsd?.daily),
    lossWeekly: micros(body.lossLimitUsd?.weekly),
    lossMonthly: micros(body.lossLimitUsd?.monthly),
    wagerDaily: micros(body.wagerLimitUsd?.daily),
    wagerWeekly: micros(body.wagerLimitUsd?.weekly),
    wagerMonthly: micros(body.wagerLimitUsd?.monthly),
  };
  return Object.fromEntries(Object.entries(asked).filter(([, value]) => value !== undefined));
}

export const protectionRouter = createRouter()
  .openapi(listRoute, async (c) => {
    const rows = await listJurisdictions(c.var.deps.db);
    return c.json({ jurisdictions: rows.map(presentJurisdiction) }, 200);
  })
  .openapi(getRoute, async (c) => {
    const playerId = playerIdOf(c);
    const record = await findProtection(c.var.deps.db, c.var.partner, playerId);
    return c.json(presentProtection(playerId, record, Date.now()), 200);
  })
  .openapi(putRoute, async (c) => {
    const playerId = playerIdOf(c);
    const body = c.req.valid("json");
    const { deps } = c.var;
    if (body.jurisdiction != null && !(await findJurisdiction(deps.db, body.jurisdiction))) {
      throw new ServiceError(ErrorCode.InvalidRequest, {
        details: [{ path: "jurisdiction", message: "no such profile (GET /jurisdictions)" }],
      });
    }
    const record = await putProtection(deps.db, c.var.partner, playerId, {
      jurisdiction: body.jurisdiction,
      settings: settingsOf(body),
    });
    // The partner's spins are checked from now on (PartnerAuth.checked): every process within 1 s.
    await announceChange(deps, "auth");
    return c.json(presentProtection(playerId, record, Date.now()), 200);
  });
