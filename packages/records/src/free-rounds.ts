import { z } from "@hono/zod-openapi";
import { type Environment, FREE_ROUND_STATUSES, microsToUsd } from "@outcomes/core";
import type { FreeRoundGrantWithStatus, FreeRoundPlayerRecord } from "@outcomes/db";
import { TimestampSchema } from "./fields.js";

const FreeRoundsId = z.string().openapi({ example: "fr_0VbemLSzdCLq6R9z4t6IYn" });

/** A free-round grant (CONTRACT §14). */
export const FreeRoundGrantSchema = z
  .object({
    freeRoundsId: FreeRoundsId,
    gameId: z.number().int().openapi({ description: "The game's gameConfigId", example: 1 }),
    wagerUsd: z.number().openapi({ description: "The wager of every round; the partner pays it", example: 0.5 }),
    rounds: z.number().int().openapi({ description: "Rounds granted to each player", example: 10 }),
    playerCount: z.number().int().openapi({ example: 2 }),
    expiresAt: TimestampSchema,
    status: z.enum(FREE_ROUND_STATUSES).openapi({
      description:
        "As of this answer: `cancelled` once cancelled, else `expired` from `expiresAt` on, else `active`. " +
        "Only an active grant's rounds can be spun",
    }),
    createdAt: TimestampSchema,
    cancelledAt: TimestampSchema.nullable(),
  })
  .openapi("FreeRoundGrant");
export type FreeRoundGrantView = z.infer<typeof FreeRoundGrantSchema>;

/** One player's rounds of a grant. */
export const FreeRoundPlayerSchema = z
  .object({
    freeRoundsId: FreeRoundsId,
    playerId: z.string().openapi({ example: "player-42" }),
    rounds: z.number().int().openapi({ description: "Rounds granted", example: 10 }),
    roundsUsed: z.number().int().openapi({ description: "Rounds spun and not voided", example: 3 }),
    roundsLeft: z.number().int().openapi({
      description: "rounds − roundsUsed while the grant is active; 0 once it is expired or cancelled",
      example: 7,
    }),
    paidUsd: z.number().openapi({ description: "The payouts of the rounds used", example: 12.5 }),
  })
  .openapi("FreeRoundPlayer");
export type FreeRoundPlayerView = z.infer<typeof FreeRoundPlayerSchema>;

/** A grant as the operator CLI shows it: with its partner and environment. */
export type OperatorFreeRoundGrantView = FreeRoundGrantView & { partnerId: string; environment: Environment };

export function presentFreeRoundGrant(grant: FreeRoundGrantWithStatus): FreeRoundGrantView {
  return {
    freeRoundsId: grant.id,
    gameId: grant.gameId,
    wagerUsd: microsToUsd(grant.wagerMicros),
    rounds: grant.rounds,
    playerCount: grant.playerCount,
    expiresAt: grant.expiresAt.toISOString(),
    status: grant.status,
    createdAt: grant.createdAt.toISOString(),
    cancelledAt: grant.cancelledAt?.toISOString() ?? null,
  };
}

export function presentOperatorFreeRoundGrant(grant: FreeRoundGrantWithStatus): OperatorFreeRoundGrantView {
  return { ...presentFreeRoundGrant(grant), partnerId: grant.partnerId, environment: grant.environment };
}

/** Rounds left count only while the grant is active: an expired or cancelled grant's cannot be spun. */
export function presentFreeRoundPlayer(
  grant: FreeRoundGrantWithStatus,
  player: FreeRoundPlayerRecord,
): FreeRoundPlayerView {
  return {
    freeRoundsId: grant.id,
    playerId: player.externalPlayerId,
    rounds: player.rounds,
    roundsUsed: player.roundsUsed,
    roundsLeft: grant.status === "active" ? player.rounds - player.roundsUsed : 0,
    paidUsd: microsToUsd(player.paidMicros),
  };
}
