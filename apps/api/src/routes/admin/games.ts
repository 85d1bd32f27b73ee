import { createRoute, z } from "@hono/zod-openapi";
// The report alone: the package's index would load the blocks worker's native hasher into the API.
import { reserveReport } from "@outcomes/blocks/report";
import { DRAW_MODES, ErrorCode } from "@outcomes/core";
import { ADMIN_COMMON_ERRORS, errorResponses, jsonResponse } from "../../openapi.js";
import { createRouter } from "../../router.js";
import { GameParams, parseGameId } from "../partner/game-schemas.js";

const Reserve = z
  .object({
    gameId: z.number().int(),
    drawMode: z.enum(DRAW_MODES),
    readyBlocks: z.number().int().openapi({ description: "Sealed blocks none of whose outcomes was taken" }),
    servingBlocks: z.number().int(),
    exhaustedBlocks: z.number().int(),
    remainingOutcomes: z.number().int().openapi({ description: "Sealed outcomes no spin has used (Postgres)" }),
    queuedOutcomes: z.number().int().openapi({ description: "Length of the game's Redis outcome list" }),
    lastSequence: z.number().int().openapi({ description: "Sequence of the last sealed block (0: none yet)" }),
    blockSize: z.number().int(),
    minReadyBlocks: z.number().int(),
    targetReadyBlocks: z.number().int(),
    lowReserve: z.boolean().openapi({ description: "readyBlocks < minReadyBlocks" }),
  })
  .openapi("Reserve");

export const adminGamesRouter = createRouter();

adminGamesRouter.openapi(
  createRoute({
    method: "get",
    path: "/games/{gameId}/reserve",
    operationId: "getGameReserve",
    tags: ["Operator: games"],
    summary: "A game's outcome reserve",
    request: { params: GameParams },
    responses: {
      200: jsonResponse(Reserve, "Blocks and outcomes in reserve"),
      ...errorResponses(...ADMIN_COMMON_ERRORS, ErrorCode.GameNotFound),
    },
  }),
  async (c) => {
    const { deps } = c.var;
    const gameId = parseGameId(c.req.valid("param").gameId, ErrorCode.GameNotFound);
    return c.json(await reserveReport(deps.db, deps.redis, deps.keys, deps.env, gameId), 200);
  },
);
