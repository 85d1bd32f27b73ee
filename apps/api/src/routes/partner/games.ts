import { setTimeout as sleep } from "node:timers/promises";
import { createRoute } from "@hono/zod-openapi";
import { ErrorCode, usdToMicros } from "@outcomes/core";
import { createGame, listGames, requireOwnGame, updateGame } from "@outcomes/db";
import { blocksWorkerCount, enqueueGeneration, type GameOwner } from "@outcomes/queue";
import { GameSchema, presentGame } from "@outcomes/records";
import type { AppDeps } from "../../context.js";
import { keyedRequest } from "../../idempotency.js";
import { announceChange } from "../../invalidation.js";
import { errorResponses, jsonBody, jsonResponse, PARTNER_COMMON_ERRORS } from "../../openapi.js";
import { createRouter } from "../../router.js";
import { createKeyOf, gatedKeyHeader, markReplay } from "../keyed-create.js";
import { pagedListRoute } from "../paged-list.js";
import { GameParams, parseGameId, RegisterGameBody, toMicros, UpdateGameBody } from "./game-schemas.js";

const tags = ["Games"];

export const gamesRouter = createRouter();

function defaultThresholdMicros(deps: AppDeps): number {
  return usdToMicros(deps.env.LARGE_WIN_THRESHOLD_USD) ?? 0;
}

/**
 * How long registration waits for the game's first outcomes. A blocks worker seals and loads a
 * default block (10,000 outcomes) in about 10 ms and the largest (1,000,000) in about a second; the
 * rest covers a worker busy refilling other games. A stuck worker costs the caller this, no more.
 */
const FIRST_OUTCOMES_WAIT_MS = 10_000;
/** LLEN every 25 ms: one cheap command, and the spin that follows waits at most that much longer. */
const FIRST_OUTCOMES_POLL_MS = 25;

/**
 * Waits, bounded, until the game's outcome queue holds an outcome, so the caller's first spin
 * succeeds. Only while a blocks worker is connected: with none, nothing would fill it, and the
 * registration answers at once (the first spin answers KS-4203 as before). The API draws nothing.
 */
async function awaitFirstOutcomes(deps: AppDeps, game: GameOwner): Promise<void> {
  const deadline = Date.now() + FIRST_OUTCOMES_WAIT_MS;
  // The producers' connection waits for Redis rather than failing: bound the look-up as well.
  const timedOut = sleep(FIRST_OUTCOMES_WAIT_MS, 0, { ref: false });
  if ((await Promise.race([blocksWorkerCount(deps.producers), timedOut])) === 0) return;
  const key = deps.keys.outcomeQueue(game);
  while (Date.now() < deadline) {
    if ((await deps.redis.llen(key)) > 0) return;
    await sleep(FIRST_OUTCOMES_POLL_MS);
  }
  deps.logger.warn(
    { gameId: game.id, waitedMs: FIRST_OUTCOMES_WAIT_MS },
    "the first outcome block was not ready in time",
  );
}

gamesRouter.openapi(
  createRoute({
    method: "post",
    path: "/games",
    operationId: "registerGame",
    tags,
    summary: "Register a game from an ACTIVE PAR sheet",
    description:
      "The game is active at once and its first outcome blocks are generated right away. While a blocks " +
      "worker runs, the answer waits (at most 10 s) until the first block is loaded, so a spin sent right " +
      "after it succeeds. With no blocks worker running it answers at once, and until blocks are loaded a " +
      "spin answers 503 KS-4203 with Retry-After. `maxWagerUsd`, and `maxWagerUsd` × the sheet's largest " +
      "multiplier, may be at most your spin ceiling (1,000,000 USD unless the operator set another; at most " +
      "2^53 − 1 micro-USD): else KS-4101 naming the largest allowed maxWagerUsd and the ceiling. With " +
      "`Idempotency-Key` (kept 24 h per partner and environment, one key space with spins) a repeat of the same " +
      "body answers the first game (`Idempotent-Replayed: true`), whatever changed since, and registers nothing " +
      "more; another body with the key is KS-4101.",
    request: {
      headers: gatedKeyHeader("game"),
      body: jsonBody(RegisterGameBody, {
        parSheetId: "par_0Nf3kQ2h7yXwz3KpL0aBcDeFg1",
        name: "Lucky Sevens",
        minWagerUsd: 0.1,
        maxWagerUsd: 100,
      }),
    },
    responses: {
      201: jsonResponse(GameSchema, "The game"),
      ...errorResponses(
        ...PARTNER_COMMON_ERRORS,
        ErrorCode.InvalidRequest,
        ErrorCode.RequiredFieldMissing,
        ErrorCode.GameNameTaken,
        ErrorCode.WagerBoundsInverted,
        ErrorCode.ParSheetNotFound,
        ErrorCode.ParSheetNotActive,
      ),
    },
  }),
  async (c) => {
    const { deps, partner } = c.var;
    const body = c.req.valid("json");
    const input = {
      parSheetId: body.parSheetId,
      name: body.name,
      minWagerMicros: toMicros(body.minWagerUsd) ?? null,
      maxWagerMicros: toMicros(body.maxWagerUsd),
      largeWinThresholdMicros: toMicros(body.largeWinThresholdUsd) ?? null,
    };
    const key = await createKeyOf(c, "game", "keyed-creates");
    const created = await deps.creates.createOnce({
      // The game as understood: its amounts in micro-USD, so `1` and `1.0` are one request.
      key: keyedRequest(partner, key, {
        route: "POST /games",
        ...input,
        minWagerMicros: input.minWagerMicros ?? "none",
        largeWinThresholdMicros: input.largeWinThresholdMicros ?? "default",
      }),
      admit: async () => (tx) => createGame(tx, partner, input),
      present: (game) => presentGame(game, defaultThresholdMicros(deps)),
      replay: (stored) => GameSchema.parse(stored),
    });
    if (created.made) await generateFirstBlock(deps, created.made);
    markReplay(c, created);
    return c.json(created.body, 201);
  },
);

/** Asks for the new game's first block and waits for it (bounded); a replay's game had its own. */
async function generateFirstBlock(deps: AppDeps, game: GameOwner): Promise<void> {
  try {
    await enqueueGeneration(deps.producers, game.id);
    await awaitFirstOutcomes(deps, game);
  } catch (error) {
    // The game is registered; its first spin's KS-4203 asks for generation again.
    deps.logger.error({ err: error, gameId: game.id }, "could not enqueue or await the first block generation");
  }
}

pagedListRoute(gamesRouter, {
  path: "/games",
  operationId: "listGames",
  tags,
  summary: "List your games (by gameConfigId)",
  schema: { name: "GameList", key: "games", item: GameSchema },
  description: "A page of games",
  common: PARTNER_COMMON_ERRORS,
  list: (c, _params, window) => listGames(c.var.deps.db, c.var.partner, window),
  present: (game, c) => presentGame(game, defaultThresholdMicros(c.var.deps)),
});

gamesRouter.openapi(
  createRoute({
    method: "get",
    path: "/games/{gameId}",
    operationId: "getGame",
    tags,
    summary: "Get a game",
    description: "A gameId you do not own in this environment (or one that cannot be an id) is 403 KS-4006.",
    request: { params: GameParams },
    responses: {
      200: jsonResponse(GameSchema, "The game"),
      ...errorResponses(...PARTNER_COMMON_ERRORS, ErrorCode.GameNotOwned),
    },
  }),
  async (c) => {
    const { deps, partner } = c.var;
    const game = await requireOwnGame(
      deps.db,
      partner,
      parseGameId(c.req.valid("param").gameId, ErrorCode.GameNotOwned),
    );
    return c.json(presentGame(game, defaultThresholdMicros(deps)), 200);
  },
);

gamesRouter.openapi(
  createRoute({
    method: "patch",
    path: "/games/{gameId}",
    operationId: "updateGame",
    tags,
    summary: "Update a game",
    description:
      "Only the fields sent change. `isActive: false` makes spins fail with KS-4202 (within a second on every " +
      "API process). The bounds are checked after merging with the stored ones (min ≥ max: KS-4109); a new " +
      "a new `maxWagerUsd`, and it × the sheet's largest multiplier, may be at most your spin ceiling (else KS-4101).",
    request: { params: GameParams, body: jsonBody(UpdateGameBody, { maxWagerUsd: 250, largeWinThresholdUsd: 5000 }) },
    responses: {
      200: jsonResponse(GameSchema, "The updated game"),
      ...errorResponses(
        ...PARTNER_COMMON_ERRORS,
        ErrorCode.GameNotOwned,
        ErrorCode.InvalidRequest,
        ErrorCode.RequiredFieldMissing,
        ErrorCode.WagerBoundsInverted,
      ),
    },
  }),
  async (c) => {
    const { deps, partner } = c.var;
    const gameId = parseGameId(c.req.valid("param").gameId, ErrorCode.GameNotOwned);
    const body = c.req.valid("json");
    const game = await updateGame(deps.db, partner, gameId, {
      ...(body.isActive !== undefined ? { isActive: body.isActive } : {}),
      ...(body.minWagerUsd !== undefined ? { minWagerMicros: toMicros(body.minWagerUsd) } : {}),
      ...(body.maxWagerUsd !== undefined ? { maxWagerMicros: toMicros(body.maxWagerUsd) } : {}),
      ...(body.largeWinThresholdUsd !== undefined
        ? { largeWinThresholdMicros: toMicros(body.largeWinThresholdUsd) }
        : {}),
    });
    // Spins sent after this answer follow the new rules: this process forgets the game before answering.
    await announceChange(deps, `game:${game.id}`);
    return c.json(presentGame(game, defaultThresholdMicros(deps)), 200);
  },
);
