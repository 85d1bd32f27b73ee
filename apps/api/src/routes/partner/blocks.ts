import { createRoute, z } from "@hono/zod-openapi";
import { couldBeId, ErrorCode, parseBlockId, parseGameId, ServiceError } from "@outcomes/core";
import { listGameBlocks, requireGameBlock, requireOwnGame, requireRevealedBlock, spinProof } from "@outcomes/db";
import {
  BlockSchema,
  presentBlock,
  presentSpinProof,
  RevealedEntriesPageSchema,
  type RevealedEntriesPageView,
  SpinProofSchema,
} from "@outcomes/records";
import type { Context } from "hono";
import type { AppEnv } from "../../context.js";
import {
  errorResponses,
  integerPathParam,
  jsonResponse,
  PARTNER_COMMON_ERRORS,
  serialisedJson,
} from "../../openapi.js";
import { createRouter } from "../../router.js";
import { PageQuery, pagedListRoute } from "../paged-list.js";
import { queryInteger } from "../query-integer.js";
import { GameParams } from "./game-schemas.js";
import { MAX_ENTRIES_PER_PAGE, revealedEntriesPage } from "./revealed-pages.js";

const tags = ["Provable fairness"];

const BlockParams = GameParams.extend({
  blockId: integerPathParam("blockId", { format: "int64", maximum: Number.MAX_SAFE_INTEGER, example: 1042 }),
});

/** `page` from 1 (default 1), `limit` 1..1000 (default 1000); anything else KS-4101. */
const EntriesPageQuery = PageQuery.extend({
  limit: queryInteger({ min: 1, max: MAX_ENTRIES_PER_PAGE, fallback: MAX_ENTRIES_PER_PAGE }),
});

const SpinParams = z.object({
  spinId: z.string().openapi({ param: { name: "spinId", in: "path" }, example: "spn_0T9xYz12AbCdEfGhIjKlMn" }),
});

/** The partner's own game in this environment, or 403 KS-4006 (blocks of other games are 404 KS-4215). */
async function ownGameId(c: Context<AppEnv>, gameIdText: string): Promise<number> {
  const game = await requireOwnGame(c.var.deps.db, c.var.partner, parseGameId(gameIdText, ErrorCode.GameNotOwned));
  return game.id;
}

export const blocksRouter = createRouter();

pagedListRoute(blocksRouter, {
  path: "/games/{gameId}/blocks",
  operationId: "listBlocks",
  tags,
  summary: "List a game's outcome blocks, newest first",
  params: GameParams,
  schema: { name: "BlockList", key: "blocks", item: BlockSchema },
  description:
    "A page of blocks. Each block's `merkleRoot` and `seedHash` were recorded when it was sealed, before any " +
    "of its entries was served, and never change; `seed` appears once the block (finite_pool: its cycle) is exhausted.",
  common: PARTNER_COMMON_ERRORS,
  errors: [ErrorCode.GameNotOwned],
  list: async (c, params, window) => listGameBlocks(c.var.deps.db, await ownGameId(c, params.gameId), window),
  present: presentBlock,
});

blocksRouter.openapi(
  createRoute({
    method: "get",
    path: "/games/{gameId}/blocks/{blockId}",
    operationId: "getBlock",
    tags,
    summary: "Get one of a game's blocks",
    request: { params: BlockParams },
    responses: {
      200: jsonResponse(BlockSchema, "The block"),
      ...errorResponses(...PARTNER_COMMON_ERRORS, ErrorCode.GameNotOwned, ErrorCode.NotFound),
    },
  }),
  async (c) => {
    const params = c.req.valid("param");
    const gameId = await ownGameId(c, params.gameId);
    return c.json(presentBlock(await requireGameBlock(c.var.deps.db, gameId, parseBlockId(params.blockId))), 200);
  },
);

blocksRouter.openapi(
  createRoute({
    method: "get",
    path: "/games/{gameId}/blocks/{blockId}/entries",
    operationId: "getBlockEntries",
    tags,
    summary: "A page of a revealed block's entries, salts and seed",
    description:
      "The block's entries in index order, `limit` (at most 1,000) a page, each with its salt and the spin that " +
      "used it (`spinId` null for an entry never served: it was retired); `total` is the block's size, and a page " +
      "past the end has no entries. Fetch every page (the SDK's `client.blocks.entries` does) and re-derive them " +
      "from `seed` and the game's PAR sheet with the SDK's `verifyRevealedBlock` (docs/fairness.md). Before the " +
      "reveal (the block, or for finite_pool its cycle, not exhausted yet): 409 KS-4216.",
    request: { params: BlockParams, query: EntriesPageQuery },
    responses: {
      200: jsonResponse(RevealedEntriesPageSchema, "A page of the revealed block"),
      ...errorResponses(
        ...PARTNER_COMMON_ERRORS,
        ErrorCode.InvalidRequest,
        ErrorCode.GameNotOwned,
        ErrorCode.NotFound,
        ErrorCode.BlockNotRevealed,
      ),
    },
  }),
  async (c) => {
    const params = c.req.valid("param");
    const page = c.req.valid("query");
    const { db, revealedPages } = c.var.deps;
    const block = await requireRevealedBlock(db, await ownGameId(c, params.gameId), parseBlockId(params.blockId));
    return serialisedJson<RevealedEntriesPageView>(c, await revealedEntriesPage(db, revealedPages, block, page));
  },
);

blocksRouter.openapi(
  createRoute({
    method: "get",
    path: "/spins/{spinId}/proof",
    operationId: "getSpinProof",
    tags,
    summary: "A spin's RFC 9162 inclusion proof",
    description:
      "Proves that the spin's outcome is entry `index` of block `blockId`, committed by the block's `merkleRoot` " +
      "before the spin: `leaf` = SHA-256(0x00 ‖ salt ‖ UTF-8(outcomeText)), and `auditPath` leads from it to the " +
      "root. Check it with the SDK's `verifySpinProof`. Unknown, another partner's or environment's spin, a forced " +
      "sandbox spin (no block), or one whose block was sealed before provable fairness: 404 KS-4215. Cheap: the " +
      "block's upper tree levels are stored at sealing, so only the spin's group of 16 leaves is hashed.",
    request: { params: SpinParams },
    responses: {
      200: jsonResponse(SpinProofSchema, "The proof"),
      ...errorResponses(...PARTNER_COMMON_ERRORS, ErrorCode.NotFound),
    },
  }),
  async (c) => {
    const { spinId } = c.req.valid("param");
    if (!couldBeId(spinId)) throw new ServiceError(ErrorCode.NotFound, { message: "Spin not found" });
    return c.json(presentSpinProof(await spinProof(c.var.deps.db, c.var.partner, spinId)), 200);
  },
);
