import { createRoute, z } from "@hono/zod-openapi";
import { microsToUsd, type Presentation, ServiceError } from "@outcomes/core";
import { findPlayer, listPlayerSpins, type PlayerRecord } from "@outcomes/db";
import type { Context } from "hono";
import type { AppEnv } from "../../context.js";
import {
  errorResponses,
  jsonResponse,
  PARTNER_COMMON_ERRORS,
  PageFields,
  PageQuery,
  pageFields,
  pageWindow,
  Timestamp,
} from "../../openapi.js";
import { createRouter } from "../../router.js";
import { SpinResult, spinResultBody } from "../../spins/spin-result.js";
import { PLAYER_ID_PATTERN } from "./spins.js";

const PlayerParams = z.object({
  playerId: z.string().openapi({ param: { name: "playerId", in: "path" }, example: "player-42" }),
});

const Player = z
  .object({
    playerId: z.string(),
    balanceUsd: z
      .number()
      .openapi({ description: "Net position with the service: Σ(payout − wager); may be negative" }),
    totalSpins: z.number().int(),
    totalWageredUsd: z.number(),
    totalPaidUsd: z.number(),
    createdAt: Timestamp.openapi({ description: "When the player's first spin was committed" }),
  })
  .openapi("Player");

const PlayerSpins = z.object({ spins: z.array(SpinResult), ...PageFields }).openapi("PlayerSpins");

const getPlayerRoute = createRoute({
  method: "get",
  path: "/players/{playerId}",
  tags: ["Players"],
  summary: "Get a player",
  description: "Players are created by their first successful spin; until then (and in another environment) 404.",
  request: { params: PlayerParams },
  responses: {
    200: jsonResponse(Player, "The player's balance and totals"),
    ...errorResponses(...PARTNER_COMMON_ERRORS, "KS-4204"),
  },
});

const listSpinsRoute = createRoute({
  method: "get",
  path: "/players/{playerId}/spins",
  tags: ["Players"],
  summary: "List a player's spins, newest first",
  request: { params: PlayerParams, query: PageQuery },
  responses: {
    200: jsonResponse(PlayerSpins, "One page of spins, each as the spin endpoint answered it"),
    ...errorResponses(...PARTNER_COMMON_ERRORS, "KS-4101", "KS-4204"),
  },
});

async function requirePlayer(c: Context<AppEnv>, playerId: string): Promise<PlayerRecord> {
  // An id no spin could have created names no player (and U+0000 must not reach Postgres).
  if (!PLAYER_ID_PATTERN.test(playerId)) throw new ServiceError("KS-4204");
  const player = await findPlayer(c.var.deps.db, c.var.partner, playerId);
  if (!player) throw new ServiceError("KS-4204");
  return player;
}

export const playersRouter = createRouter()
  .openapi(getPlayerRoute, async (c) => {
    const player = await requirePlayer(c, c.req.valid("param").playerId);
    return c.json(
      {
        playerId: player.externalId,
        balanceUsd: microsToUsd(player.balanceMicros),
        totalSpins: player.totalSpins,
        totalWageredUsd: microsToUsd(player.totalWageredMicros),
        totalPaidUsd: microsToUsd(player.totalPaidMicros),
        createdAt: player.createdAt.toISOString(),
      },
      200,
    );
  })
  .openapi(listSpinsRoute, async (c) => {
    const player = await requirePlayer(c, c.req.valid("param").playerId);
    const page = c.req.valid("query");
    const rows = await listPlayerSpins(c.var.deps.db, player.id, pageWindow(page));
    return c.json(
      {
        spins: rows.map((row) =>
          spinResultBody({
            id: row.id,
            gameId: row.gameId,
            externalPlayerId: player.externalId,
            wagerMicros: row.wagerMicros,
            prizeTier: row.prizeTier,
            multiplierMillionths: row.multiplierMillionths,
            payoutMicros: row.payoutMicros,
            balanceAfterMicros: row.balanceAfterMicros,
            presentation: row.presentation as Presentation,
            fairness: { blockId: row.blockId, index: row.outcomeIndex },
            createdAt: row.createdAt,
          }),
        ),
        // The total is kept in step with the spins table: both are written by the same statement.
        ...pageFields(page, player.totalSpins),
      },
      200,
    );
  });
