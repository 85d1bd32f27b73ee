import { z } from "@hono/zod-openapi";
import { microsToUsd } from "@outcomes/core";
import type { GameWithRtp } from "@outcomes/db";
import { TimestampSchema } from "./fields.js";

export const GameSchema = z
  .object({
    gameConfigId: z.number().int().openapi({ example: 1 }),
    name: z.string(),
    parSheetId: z.string(),
    minWagerUsd: z.number().nullable(),
    maxWagerUsd: z.number(),
    largeWinThresholdUsd: z.number().openapi({ description: "The value in force (the game's or the default)" }),
    isActive: z.boolean(),
    rtp: z.number(),
    createdAt: TimestampSchema,
  })
  .openapi("Game");
export type GameView = z.infer<typeof GameSchema>;

/** `largeWinThresholdUsd` shows the value in force: the game's own or the deployment default. */
export function presentGame(game: GameWithRtp, defaultThresholdMicros: number): GameView {
  return {
    gameConfigId: game.id,
    name: game.name,
    parSheetId: game.parSheetId,
    minWagerUsd: game.minWagerMicros === null ? null : microsToUsd(game.minWagerMicros),
    maxWagerUsd: microsToUsd(game.maxWagerMicros),
    largeWinThresholdUsd: microsToUsd(game.largeWinThresholdMicros ?? defaultThresholdMicros),
    isActive: game.isActive,
    rtp: Number(game.rtp),
    createdAt: game.createdAt.toISOString(),
  };
}
