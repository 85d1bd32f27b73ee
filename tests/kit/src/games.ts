import {
  type FillProgress,
  fillReserve,
  type RevealSweep,
  reserveTargets,
  revealExhaustedBlocks,
} from "@outcomes/blocks";
import { SAMPLE_PAR_SHEET } from "@outcomes/core";
import type { TestApi } from "./api.js";

export interface TestGame {
  partnerId: string;
  apiKey: string;
  parSheetId: string;
  gameId: number;
  /** What the fill did (absent when `fill: false`). */
  fill?: FillProgress;
}

export interface TestGameOptions {
  /** An existing partner (from `api.createPartner`); default: a new sandbox partner. */
  partner?: { partnerId: string; apiKey: string };
  /** The PAR sheet document; default: the contract's sample (RTP 0.96). */
  sheet?: unknown;
  /** Fields of POST /games besides parSheetId; default: a unique name, maxWagerUsd 100. */
  game?: Record<string, unknown>;
  /** Fill the game's outcome queue to TARGET_READY_BLOCKS before returning (default true). */
  fill?: boolean;
}

/**
 * The shared fixture of game and spin tests: uploads a PAR sheet and registers a game over real
 * HTTP (approving the sheet as operator when it waits for approval), then fills the game's Redis
 * queue by running the blocks worker's reserve fill in-process against the test database and Redis,
 * exactly as the `blocks` role does. Block size and targets come from the API's env overrides.
 */
export async function registerTestGame(api: TestApi, options: TestGameOptions = {}): Promise<TestGame> {
  const partner = options.partner ?? (await api.createPartner());
  const sheet = await api.request("/api/partner/v1/par-sheets", {
    method: "POST",
    apiKey: partner.apiKey,
    json: options.sheet ?? SAMPLE_PAR_SHEET,
  });
  if (sheet.status !== 201) throw new Error(`PAR sheet upload failed: ${JSON.stringify(sheet.body)}`);
  if (sheet.body.status !== "ACTIVE") {
    const approved = await api.request(`/api/admin/v1/par-sheets/${sheet.body.id}/approve`, {
      method: "POST",
      admin: true,
    });
    if (approved.status !== 200) throw new Error(`PAR sheet approval failed: ${JSON.stringify(approved.body)}`);
  }
  const game = await api.request("/api/partner/v1/games", {
    method: "POST",
    apiKey: partner.apiKey,
    json: { parSheetId: sheet.body.id, name: `Game ${sheet.body.id}`, maxWagerUsd: 100, ...options.game },
  });
  if (game.status !== 201) throw new Error(`game registration failed: ${JSON.stringify(game.body)}`);
  const registered: TestGame = {
    partnerId: partner.partnerId,
    apiKey: partner.apiKey,
    parSheetId: sheet.body.id,
    gameId: game.body.gameConfigId,
  };
  if (options.fill !== false) registered.fill = await fillTestGameQueue(api, registered.gameId);
  return registered;
}

/** Fills (or refills, or rebuilds) a game's outcome queue to TARGET_READY_BLOCKS, in-process. */
export async function fillTestGameQueue(api: TestApi, gameId: number): Promise<FillProgress> {
  const { db, redis, keys, logger, env } = api.deps;
  return fillReserve({ db, redis, keys, logger, targets: reserveTargets(env) }, gameId);
}

/** Runs the `blocks.reveal` sweep in-process, as the blocks role does every few seconds (`now`: its clock). */
export async function revealTestBlocks(api: TestApi, now?: number): Promise<RevealSweep> {
  const { db, redis, keys, logger } = api.deps;
  return revealExhaustedBlocks({ db, redis, keys, logger }, now);
}
