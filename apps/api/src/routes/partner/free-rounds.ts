import { createRoute, z } from "@hono/zod-openapi";
import { ErrorCode, ServiceError } from "@outcomes/core";
import {
  cancelFreeRoundGrant,
  createFreeRoundGrant,
  findFreeRoundPlayer,
  findIdempotencyRecord,
  type IdempotencyRecord,
  listFreeRoundGrants,
  requireOwnFreeRoundGrant,
  sqlClientOf,
} from "@outcomes/db";
import {
  FreeRoundGrantSchema,
  FreeRoundPlayerSchema,
  presentFreeRoundGrant,
  presentFreeRoundPlayer,
} from "@outcomes/records";
import type { PartnerAuth } from "../../auth/key-verifier.js";
import { errorResponses, jsonBody, jsonResponse, PARTNER_COMMON_ERRORS } from "../../openapi.js";
import { createRouter } from "../../router.js";
import { assertSameRequest, type IdempotentRequest, idempotentRequest } from "../../spins/idempotency.js";
import { exactWager, hasAtMostSixDecimals, wagerMicrosWithin } from "../../spins/wager.js";
import { pagedListRoute } from "../paged-list.js";
import { PLAYER_ID_PATTERN } from "./spin-json.js";
import { idempotencyKeyHeader } from "./spins.js";

// Free-round grants (CONTRACT §14, docs/free-rounds.md). Spinning a round is POST /spins's.

const MAX_PLAYERS = 1000;
const MAX_ROUNDS = 1000;
const MAX_DAYS_AHEAD = 90;
const DAY_MS = 86_400_000;
/** An `expiresAt` of exactly 90 days ahead, computed on a client whose clock runs a little ahead, still counts. */
const CLOCK_SKEW_MS = 60_000;

/** Each repeat of an earlier id, named with the index of its first occurrence. */
function refuseDuplicates(playerIds: string[], ctx: z.RefinementCtx): void {
  const firstAt = new Map<string, number>();
  playerIds.forEach((playerId, index) => {
    const first = firstAt.get(playerId);
    if (first === undefined) firstAt.set(playerId, index);
    else ctx.addIssue({ code: "custom", path: [index], message: `duplicate of playerIds[${first}] (${playerId})` });
  });
}

const GrantBody = z
  .object({
    gameId: z
      .number()
      .int()
      .openapi({ description: "The game's gameConfigId: the only game the rounds play", example: 1 }),
    playerIds: z
      .array(z.string().max(128).regex(PLAYER_ID_PATTERN, "1..128 characters of letters, digits and -_.:@"))
      .min(1)
      .max(MAX_PLAYERS)
      .superRefine(refuseDuplicates)
      .openapi({
        description: `1..${MAX_PLAYERS} distinct player ids of yours (players need not have spun yet)`,
        example: ["player-42", "player-43"],
      }),
    rounds: z
      .number()
      .int()
      .min(1)
      .max(MAX_ROUNDS)
      .openapi({ description: `Rounds for each player, 1..${MAX_ROUNDS}`, example: 10 }),
    wagerUsd: z
      .number()
      .refine(hasAtMostSixDecimals, "at most 6 decimal places")
      .openapi({
        description:
          "The wager of every round, at most 6 decimals, within the game's limits (else KS-4103); you pay it, " +
          "the player's balance moves by the payout only",
        example: 0.5,
      }),
    // Checked against the clock after a key's replay (`expiryWithin`): a retry of a grant made a
    // minute before its expiry still answers the grant.
    expiresAt: z.iso.datetime({ offset: true }).openapi({
      format: "date-time",
      description:
        `ISO 8601 with a time zone, in the future and at most ${MAX_DAYS_AHEAD} days ahead (a minute of clock ` +
        "skew allowed). From then on the grant is `expired`: its rounds can no longer be spun",
    }),
  })
  .openapi("GrantFreeRounds");

/** A month ahead of whenever the document is served: a getter, so the example stays valid. */
const grantExample = {
  gameId: 1,
  playerIds: ["player-42", "player-43"],
  rounds: 10,
  wagerUsd: 0.5,
  get expiresAt() {
    return `${new Date(Date.now() + 30 * DAY_MS).toISOString().slice(0, 10)}T00:00:00Z`;
  },
};

const GrantParams = z.object({
  freeRoundsId: z
    .string()
    .openapi({ param: { name: "freeRoundsId", in: "path" }, example: "fr_0VbemLSzdCLq6R9z4t6IYn" }),
});

const PlayerParams = GrantParams.extend({
  playerId: z.string().openapi({ param: { name: "playerId", in: "path" }, example: "player-42" }),
});

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
    const body = c.req.valid("json");
    const key = keyedGrant(partner, body, c.req.valid("header")["Idempotency-Key"]);
    // A repeat is answered before the game's rules, which may have changed since the first request.
    const replay = (record: IdempotencyRecord) => {
      c.header("Idempotent-Replayed", "true");
      return c.json(replayedGrant(key!, record), 201);
    };
    const seen = key && (await findIdempotencyRecord(sqlClientOf(deps.db), key.scope));
    if (seen) return replay(seen);
    const expiresAt = expiryWithin(body.expiresAt);
    const game = await deps.games.get(body.gameId);
    if (!game || game.partnerId !== partner.partnerId || game.environment !== partner.environment) {
      throw new ServiceError(ErrorCode.GameNotOwned);
    }
    if (!game.isActive) throw new ServiceError(ErrorCode.GameInactive);
    const made = await createFreeRoundGrant(
      deps.db,
      partner,
      {
        gameId: game.id,
        wagerMicros: wagerMicrosWithin(body.wagerUsd, game),
        rounds: body.rounds,
        expiresAt,
        playerIds: body.playerIds,
      },
      key && {
        scope: key.scope,
        requestHash: key.hash,
        answer: (grant) => ({ status: 201, body: presentFreeRoundGrant(grant) }),
      },
    );
    // A first request with the key committed while this one ran: its grant is the answer.
    if ("prior" in made) return replay(made.prior);
    return c.json(presentFreeRoundGrant(made.created), 201);
  },
);

/** `expiresAt` in the future and at most 90 days ahead (KS-4101). */
function expiryWithin(text: string): Date {
  const at = Date.parse(text);
  const problem =
    at <= Date.now()
      ? "must be in the future"
      : at > Date.now() + MAX_DAYS_AHEAD * DAY_MS + CLOCK_SKEW_MS
        ? `must be at most ${MAX_DAYS_AHEAD} days ahead`
        : null;
  if (problem) throw new ServiceError(ErrorCode.InvalidRequest, { details: [{ path: "expiresAt", message: problem }] });
  return new Date(at);
}

/** The grant as understood (the wager as an exact decimal, the expiry as an instant), keyed. */
function keyedGrant(partner: PartnerAuth, body: z.infer<typeof GrantBody>, key: string | undefined) {
  if (key === undefined) return undefined;
  const scope = { partnerId: partner.partnerId, environment: partner.environment, key };
  return idempotentRequest(scope, {
    route: "POST /free-rounds",
    gameId: body.gameId,
    playerIds: JSON.stringify(body.playerIds),
    rounds: body.rounds,
    wager: exactWager(body.wagerUsd),
    expiresAt: new Date(body.expiresAt).toISOString(),
  });
}

/** The first grant made with the key; the same key with another body (or a spin's) is KS-4101. */
function replayedGrant(key: IdempotentRequest, record: IdempotencyRecord) {
  assertSameRequest(key, record);
  // jsonb keeps keys in its own order: parsing gives them back in the documented one.
  return FreeRoundGrantSchema.parse(record.responseBody);
}

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
