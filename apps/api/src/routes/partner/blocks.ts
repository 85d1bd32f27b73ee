import { createRoute } from "@hono/zod-openapi";
import { couldBeId, parseBlockId, parseGameId, ServiceError } from "@outcomes/core";
import { listGameBlocks, requireGameBlock, requireOwnGame, revealedBlockEntries, spinProof } from "@outcomes/db";
import type { Context } from "hono";
import type { AppEnv } from "../../context.js";
import {
  errorResponses,
  jsonResponse,
  PARTNER_COMMON_ERRORS,
  PageQuery,
  pageFields,
  pageWindow,
} from "../../openapi.js";
import { createRouter } from "../../router.js";
import { Block, BlockList, BlockParams, RevealedEntries, SpinParams, SpinProof } from "./block-schemas.js";
import { GameParams } from "./game-schemas.js";

const tags = ["Provable fairness"];

/** The partner's own game in this environment, or 403 KS-4006 (blocks of other games are 404 KS-4215). */
async function ownGameId(c: Context<AppEnv>, gameIdText: string): Promise<number> {
  const game = await requireOwnGame(c.var.deps.db, c.var.partner, parseGameId(gameIdText, "KS-4006"));
  return game.id;
}

export const blocksRouter = createRouter();

blocksRouter.openapi(
  createRoute({
    method: "get",
    path: "/games/{gameId}/blocks",
    tags,
    summary: "List a game's outcome blocks, newest first",
    description:
      "Each block's `merkleRoot` and `seedHash` were recorded when it was sealed, before any of its entries " +
      "was served, and never change; `seed` appears once the block (finite_pool: its cycle) is exhausted.",
    request: { params: GameParams, query: PageQuery },
    responses: {
      200: jsonResponse(BlockList, "A page of blocks"),
      ...errorResponses(...PARTNER_COMMON_ERRORS, "KS-4006", "KS-4101"),
    },
  }),
  async (c) => {
    const gameId = await ownGameId(c, c.req.valid("param").gameId);
    const page = c.req.valid("query");
    const result = await listGameBlocks(c.var.deps.db, gameId, pageWindow(page));
    return c.json({ blocks: result.rows, ...pageFields(page, result.total) }, 200);
  },
);

blocksRouter.openapi(
  createRoute({
    method: "get",
    path: "/games/{gameId}/blocks/{blockId}",
    tags,
    summary: "Get one of a game's blocks",
    request: { params: BlockParams },
    responses: {
      200: jsonResponse(Block, "The block"),
      ...errorResponses(...PARTNER_COMMON_ERRORS, "KS-4006", "KS-4215"),
    },
  }),
  async (c) => {
    const params = c.req.valid("param");
    const gameId = await ownGameId(c, params.gameId);
    return c.json(await requireGameBlock(c.var.deps.db, gameId, parseBlockId(params.blockId)), 200);
  },
);

blocksRouter.openapi(
  createRoute({
    method: "get",
    path: "/games/{gameId}/blocks/{blockId}/entries",
    tags,
    summary: "A revealed block's entries, salts and seed",
    description:
      "Every entry with its salt and the spin that used it (`spinId` null for an entry never served: it was " +
      "retired). Re-derive them from `seed` and the game's PAR sheet with the SDK's `verifyRevealedBlock` " +
      "(docs/fairness.md). Before the reveal (the block, or for finite_pool its cycle, not exhausted yet): 409 KS-4216.",
    request: { params: BlockParams },
    responses: {
      200: jsonResponse(RevealedEntries, "The revealed block"),
      ...errorResponses(...PARTNER_COMMON_ERRORS, "KS-4006", "KS-4215", "KS-4216"),
    },
  }),
  async (c) => {
    const params = c.req.valid("param");
    const gameId = await ownGameId(c, params.gameId);
    return c.json(await revealedBlockEntries(c.var.deps.db, gameId, parseBlockId(params.blockId)), 200);
  },
);

blocksRouter.openapi(
  createRoute({
    method: "get",
    path: "/spins/{spinId}/proof",
    tags,
    summary: "A spin's RFC 9162 inclusion proof",
    description:
      "Proves that the spin's outcome is entry `index` of block `blockId`, committed by the block's `merkleRoot` " +
      "before the spin: `leaf` = SHA-256(0x00 ‖ salt ‖ UTF-8(outcomeText)), and `auditPath` leads from it to the " +
      "root. Check it with the SDK's `verifySpinProof`. Unknown, another partner's or environment's spin, or one " +
      "whose block was sealed before provable fairness: 404 KS-4215.",
    request: { params: SpinParams },
    responses: {
      200: jsonResponse(SpinProof, "The proof"),
      ...errorResponses(...PARTNER_COMMON_ERRORS, "KS-4215"),
    },
  }),
  async (c) => {
    const { spinId } = c.req.valid("param");
    if (!couldBeId(spinId)) throw new ServiceError("KS-4215", { message: "Spin not found" });
    return c.json(await spinProof(c.var.deps.db, c.var.partner, spinId), 200);
  },
);
