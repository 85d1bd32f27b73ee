import { z } from "@hono/zod-openapi";
import { MAX_DAYS_AHEAD } from "../../free-rounds/grant-service.js";
import { hasAtMostSixDecimals } from "../../spins/wager.js";
import { PLAYER_ID_PATTERN } from "./spin-json.js";

// The request shapes of the free-round routes (free-rounds.ts), with their OpenAPI metadata.

const MAX_PLAYERS = 1000;
const MAX_ROUNDS = 1000;
const DAY_MS = 86_400_000;

/** Each repeat of an earlier id, named with the index of its first occurrence. */
function refuseDuplicates(playerIds: string[], ctx: z.RefinementCtx): void {
  const firstAt = new Map<string, number>();
  playerIds.forEach((playerId, index) => {
    const first = firstAt.get(playerId);
    if (first === undefined) firstAt.set(playerId, index);
    else ctx.addIssue({ code: "custom", path: [index], message: `duplicate of playerIds[${first}] (${playerId})` });
  });
}

export const GrantBody = z
  .object({
    gameId: z
      .number()
      .int()
      .openapi({ description: "The game's gameConfigId: the only game the rounds play", example: 1 }),
    playerIds: z
      .array(z.string().max(128).regex(PLAYER_ID_PATTERN, "1..128 characters of letters, digits and -_.:@"))
      .min(1)
      .max(MAX_PLAYERS)
      .superRefine(refuseDuplicates)
      .openapi({
        description: `1..${MAX_PLAYERS} distinct player ids of yours (players need not have spun yet)`,
        example: ["player-42", "player-43"],
      }),
    rounds: z
      .number()
      .int()
      .min(1)
      .max(MAX_ROUNDS)
      .openapi({ description: `Rounds for each player, 1..${MAX_ROUNDS}`, example: 10 }),
    wagerUsd: z
      .number()
      .refine(hasAtMostSixDecimals, "at most 6 decimal places")
      .openapi({
        description:
          "The wager of every round, at most 6 decimals, within the game's limits (else KS-4103); you pay it, " +
          "the player's balance moves by the payout only",
        example: 0.5,
      }),
    // Checked against the clock after a key's replay (grant-service.ts): a retry of a grant made a
    // minute before its expiry still answers the grant.
    expiresAt: z.iso.datetime({ offset: true }).openapi({
      format: "date-time",
      description:
        `ISO 8601 with a time zone, in the future and at most ${MAX_DAYS_AHEAD} days ahead (a minute of clock ` +
        "skew allowed). From then on the grant is `expired`: its rounds can no longer be spun",
    }),
  })
  .openapi("GrantFreeRounds");

/** A month ahead of whenever the document is served: a getter, so the example stays valid. */
export const grantExample = {
  gameId: 1,
  playerIds: ["player-42", "player-43"],
  rounds: 10,
  wagerUsd: 0.5,
  get expiresAt() {
    return `${new Date(Date.now() + 30 * DAY_MS).toISOString().slice(0, 10)}T00:00:00Z`;
  },
};

export const GrantParams = z.object({
  freeRoundsId: z
    .string()
    .openapi({ param: { name: "freeRoundsId", in: "path" }, example: "fr_0VbemLSzdCLq6R9z4t6IYn" }),
});

export const PlayerParams = GrantParams.extend({
  playerId: z.string().openapi({ param: { name: "playerId", in: "path" }, example: "player-42" }),
});
