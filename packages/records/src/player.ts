import { z } from "@hono/zod-openapi";
import { microsToUsd } from "@outcomes/core";
import type { PlayerRecord } from "@outcomes/db";
import { TimestampSchema } from "./fields.js";

export const PlayerSchema = z
  .object({
    playerId: z.string(),
    balanceUsd: z
      .number()
      .openapi({ description: "Net position with the service: Σ(payout − wager); may be negative" }),
    totalSpins: z.number().int(),
    totalWageredUsd: z.number(),
    totalPaidUsd: z.number(),
    createdAt: TimestampSchema.openapi({ description: "When the player's first spin was committed" }),
  })
  .openapi("Player");
export type PlayerView = z.infer<typeof PlayerSchema>;

export function presentPlayer(player: PlayerRecord): PlayerView {
  return {
    playerId: player.externalId,
    balanceUsd: microsToUsd(player.balanceMicros),
    totalSpins: player.totalSpins,
    totalWageredUsd: microsToUsd(player.totalWageredMicros),
    totalPaidUsd: microsToUsd(player.totalPaidMicros),
    createdAt: player.createdAt.toISOString(),
  };
}
