import { createRoute } from "@hono/zod-openapi";
import { ErrorCode, ServiceError } from "@outcomes/core";
import { cancelFreeRoundGrant, findFreeRoundPlayer, listFreeRoundGrants, requireOwnFreeRoundGrant } from "@outcomes/db";
import {
  FreeRoundGrantSchema,
  FreeRoundPlayerSchema,
  presentFreeRoundGrant,
  presentFreeRoundPlayer,
} from "@outcomes/records";
import { errorResponses, jsonBody, jsonResponse, PARTNER_COMMON_ERRORS } from "../../openapi.js";
import { createRouter } from "../../router.js";
import { markReplay } from "../keyed-create.js";
import { pagedListRoute } from "../paged-list.js";
import { GrantBody, GrantParams, grantExample, PlayerParams } from "./free-round-schemas.js";
import { PLAYER_ID_PATTERN } from "./spin-json.js";
import { idempotencyKeyHeader } from "./spins.js";

// Free-round grants (CONTRACT §14, docs/free-rounds.md): parse, call the grant service, present.
// Spinning a round is POST /spins's.

const tags = ["Free rounds"];
const NOT_OWNED = "Another partner's or environment's grant, or an unknown id: 404 KS-4219.";

export const freeRoundsRouter = createRouter();

freeRoundsRouter.openapi(
  createRoute({
    method: "post",
    path: "/free-rounds",
    operationId: "grantFreeRounds",
    tags,
    summary: "Grant players free rounds of a game",
    description:
      "Each player gets `rounds` spins of the game at `wagerUsd`, paid by you: spin one with `POST /spins` " +
      "`{gameId, playerId, freeRoundsId}`. The game must be yours in this environment (else 403 KS-4006) and " +
      "active (else 400 KS-4202). A refused grant writes nothing. With `Idempotency-Key` (kept 24 h per partner and " +
      "environment, one key space with spins) a repeat of the same body answers the first grant " +
      "(`Idempotent-Replayed: true`) and grants nothing more; another body with the key is KS-4101.",
    request: { headers: idempotencyKeyHeader("grant"), body: jsonBody(GrantBody, grantExample) },
    responses: {
      201: jsonResponse(FreeRoundGrantSchema, "The grant, `active`"),
      ...errorResponses(
        ...PARTNER_COMMON_ERRORS,
        ErrorCode.GameNotOwned,
        ErrorCode.InvalidRequest,
        ErrorCode.RequiredFieldMissing,
        ErrorCode.WagerOutOfRange,
        ErrorCode.GameInactive,
      ),
    },
  }),
  async (c) => {
    const { deps, partner } = c.var;
    const granted = await deps.grants.grant(partner, c.req.valid("json"), c.req.valid("header")["Idempotency-Key"]);
    markReplay(c, granted);
    return c.json(granted.body, 201);
  },
);

pagedListRoute(freeRoundsRouter, {
  path: "/free-rounds",
  operationId: "listFreeRounds",
  tags,
  summary: "List free-round grants, newest first",
  about: `Every grant of this environment, each with its status as of the answer.`,
  schema: { name: "FreeRoundGrantList", key: "freeRounds", item: FreeRoundGrantSchema },
  description: "A page of grants",
  common: PARTNER_COMMON_ERRORS,
  list: (c, _params, window) => listFreeRoundGrants(c.var.deps.db, c.var.partner, window),
  present: presentFreeRoundGrant,
});

freeRoundsRouter.openapi(
  createRoute({
    method: "get",
    path: "/free-rounds/{freeRoundsId}",
    operationId: "getFreeRounds",
    tags,
    summary: "Get a free-round grant",
    description: `The grant with its status as of the answer. ${NOT_OWNED}`,
    request: { params: GrantParams },
    responses: {
      200: jsonResponse(FreeRoundGrantSchema, "The grant"),
      ...errorResponses(...PARTNER_COMMON_ERRORS, ErrorCode.FreeRoundsNotFound),
    },
  }),
  async (c) => {
    const grant = await requireOwnFreeRoundGrant(c.var.deps.db, c.var.partner, c.req.valid("param").freeRoundsId);
    return c.json(presentFreeRoundGrant(grant), 200);
  },
);

freeRoundsRouter.openapi(
  createRoute({
    method: "get",
    path: "/free-rounds/{freeRoundsId}/players/{playerId}",
    operationId: "getFreeRoundsPlayer",
    tags,
    summary: "A player's rounds of a grant",
    description:
      "`roundsLeft` is `rounds − roundsUsed` while the grant is active and 0 once it is expired or cancelled; " +
      `\`paidUsd\` sums the payouts of the rounds used. ${NOT_OWNED} A player not in the grant: 404 KS-4204.`,
    request: { params: PlayerParams },
    responses: {
      200: jsonResponse(FreeRoundPlayerSchema, "The player's rounds"),
      ...errorResponses(...PARTNER_COMMON_ERRORS, ErrorCode.FreeRoundsNotFound, ErrorCode.PlayerNotFound),
    },
  }),
  async (c) => {
    const { db } = c.var.deps;
    const { freeRoundsId, playerId } = c.req.valid("param");
    const grant = await requireOwnFreeRoundGrant(db, c.var.partner, freeRoundsId);
    // An id no player can have is in no grant (and U+0000 must not reach Postgres).
    const player = PLAYER_ID_PATTERN.test(playerId) ? await findFreeRoundPlayer(db, grant.id, playerId) : null;
    if (!player) throw new ServiceError(ErrorCode.PlayerNotFound, { message: "Player not in this grant" });
    return c.json(presentFreeRoundPlayer(grant, player), 200);
  },
);

freeRoundsRouter.openapi(
  createRoute({
    method: "post",
    path: "/free-rounds/{freeRoundsId}/cancel",
    operationId: "cancelFreeRounds",
    tags,
    summary: "Cancel a free-round grant",
    description:
      "From now on no round of the grant can be spun (409 KS-4218); rounds already spun stay. Cancelling a " +
      "cancelled grant answers 200 with the first cancel and changes nothing, so it is safe to retry; an expired " +
      `grant can be cancelled too and then shows \`cancelled\`. ${NOT_OWNED}`,
    request: { params: GrantParams },
    responses: {
      200: jsonResponse(FreeRoundGrantSchema, "The grant, `cancelled`"),
      ...errorResponses(...PARTNER_COMMON_ERRORS, ErrorCode.FreeRoundsNotFound),
    },
  }),
  async (c) => {
    const grant = await cancelFreeRoundGrant(c.var.deps.db, c.var.partner, c.req.valid("param").freeRoundsId);
    return c.json(presentFreeRoundGrant(grant), 200);
  },
);
