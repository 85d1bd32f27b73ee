import { createRoute, z } from "@hono/zod-openapi";
import { ErrorCode, ServiceError } from "@outcomes/core";
import { type Database, findListedPlayer, findPlayer, listPlayerSpins } from "@outcomes/db";
import { ListedSpinSchema, PlayerSchema, presentPlayer, presentStoredSpin } from "@outcomes/records";
import type { Context } from "hono";
import type { JSONParsed } from "hono/utils/types";
import type { AppEnv } from "../../context.js";
import { errorResponses, jsonResponse, PARTNER_COMMON_ERRORS, serialisedJson } from "../../openapi.js";
import { createRouter } from "../../router.js";
import { PageQuery, pageFields, pageSchema, pageWindow } from "../paged-list.js";
import { PLAYER_ID_PATTERN, serializeSpinResult } from "./spin-json.js";
import { askedViews, includeProof, replayLinksParam, withViews } from "./spin-views.js";

const PlayerParams = z.object({
  playerId: z.string().openapi({ param: { name: "playerId", in: "path" }, example: "player-42" }),
});

const PlayerSpins = pageSchema("PlayerSpins", "spins", ListedSpinSchema);

const PlayerSpinsQuery = PageQuery.extend({ include: includeProof, replayLinks: replayLinksParam });

const getPlayerRoute = createRoute({
  method: "get",
  path: "/players/{playerId}",
  operationId: "getPlayer",
  tags: ["Players"],
  summary: "Get a player",
  description: "Players are created by their first successful spin; until then (and in another environment) 404.",
  request: { params: PlayerParams },
  responses: {
    200: jsonResponse(PlayerSchema, "The player's balance and totals"),
    ...errorResponses(...PARTNER_COMMON_ERRORS, ErrorCode.PlayerNotFound),
  },
});

const listSpinsRoute = createRoute({
  method: "get",
  path: "/players/{playerId}/spins",
  operationId: "listPlayerSpins",
  tags: ["Players"],
  summary: "List a player's spins, newest first",
  description:
    "A page of the player's spins, each as the spin endpoint answered it, voided ones too. The last game and the " +
    "nine before it (AGCO 13.1) are the first page with `limit=10`. `?replayLinks=true` adds a `replayUrl` to " +
    "each (a replay page: the spin as played, its proof checked in the browser); `?include=proof` adds each " +
    "spin's `proof` and `block`, so a verifier checks a page of spins with one request, counted once by the rate " +
    "limit. Both are available once `release finish` has run for release 3 (until then they are ignored).",
  request: { params: PlayerParams, query: PlayerSpinsQuery },
  responses: {
    200: jsonResponse(PlayerSpins, "One page of spins, each as the spin endpoint answered it"),
    ...errorResponses(...PARTNER_COMMON_ERRORS, ErrorCode.InvalidRequest, ErrorCode.PlayerNotFound),
  },
});

async function requirePlayer<Player>(
  c: Context<AppEnv>,
  playerId: string,
  find: (db: Database, owner: AppEnv["Variables"]["partner"], externalId: string) => Promise<Player | null>,
): Promise<Player> {
  // An id no spin could have created names no player (and U+0000 must not reach Postgres).
  if (!PLAYER_ID_PATTERN.test(playerId)) throw new ServiceError(ErrorCode.PlayerNotFound);
  const player = await find(c.var.deps.db, c.var.partner, playerId);
  if (!player) throw new ServiceError(ErrorCode.PlayerNotFound);
  return player;
}

export const playersRouter = createRouter()
  .openapi(getPlayerRoute, async (c) => {
    const player = await requirePlayer(c, c.req.valid("param").playerId, findPlayer);
    return c.json(presentPlayer(player), 200);
  })
  .openapi(listSpinsRoute, async (c) => {
    const player = await requirePlayer(c, c.req.valid("param").playerId, findListedPlayer);
    const page = c.req.valid("query");
    const { deps } = c.var;
    // The player is found on the primary (a spin may have just created it); its spins are a listing.
    const rows = await listPlayerSpins(deps.readDb, player, pageWindow(page));
    const spins = rows.map((row) => presentStoredSpin(row, player.externalId));
    // The total is kept in step with the spins table: `totalSpins` is written by the same statement as
    // the spins, and voided spins, which it no longer counts, are still listed (counted with it).
    const fields = pageFields(page, player.totalSpins + player.voidedSpins);
    const views = await askedViews(c, page);
    if (views.proof || views.replayLinks) {
      return c.json({ spins: await withViews(c, deps.readDb, spins, views), ...fields }, 200);
    }
    // The plain page, each spin written by the spin result's compiled serialiser (the same text as
    // JSON.stringify, in about half its time: a page of 20 is most of the listing's CPU).
    const json = `{"spins":[${spins.map(serializeSpinResult).join(",")}],${JSON.stringify(fields).slice(1)}`;
    return serialisedJson<JSONParsed<z.infer<typeof PlayerSpins>>>(c, json);
  });
