import { createRoute, z } from "@hono/zod-openapi";
import { ErrorCode } from "@outcomes/core";
import { SpinResultSchema } from "@outcomes/records";
import { errorResponses, jsonBody, jsonResponse, PARTNER_COMMON_ERRORS } from "../../openapi.js";
import { refusal } from "../../ratelimit/index.js";
import { createRouter } from "../../router.js";
import { FORCE_TIER_MAX_LENGTH } from "../../spins/forced-outcomes.js";
import { hasAtMostSixDecimals } from "../../spins/wager.js";
import { spinAnswer } from "./spin-recall.js";

/** Letters, digits and `-_.:@`, 1 to 128 characters (CONTRACT §4 Spins). */
export const PLAYER_ID_PATTERN = /^[A-Za-z0-9\-_.:@]{1,128}$/;

/** The optional `Idempotency-Key` header of a write that creates something (one key per intended `what`). */
export function idempotencyKeyHeader(what: string) {
  return z.object({
    // Matched case-insensitively; declared as spelled, so typed clients send `Idempotency-Key`.
    "Idempotency-Key": z
      .string()
      .max(255)
      // An empty key would silently make every later keyless-looking retry replay the first request.
      .refine((key) => key.trim() !== "", "must not be empty or only spaces")
      .optional()
      .openapi({ description: `1 to 255 characters (not only spaces), one per intended ${what}` }),
  });
}

export const SpinRequestBody = z
  .object({
    gameId: z.number().int().openapi({ description: "The game's gameConfigId", example: 1 }),
    playerId: z
      .string()
      .max(128)
      .regex(PLAYER_ID_PATTERN, "1..128 characters of letters, digits and -_.:@")
      .openapi({ description: "The partner's own player id", example: "player-42" }),
    wagerUsd: z
      .number()
      .refine(hasAtMostSixDecimals, "at most 6 decimal places")
      .optional()
      .openapi({
        description:
          "Wager in USD, at most 6 decimals, within the game's limits. Required (KS-4102), except on a free-round " +
          "spin, whose wager is its grant's: left out, or equal to it (else KS-4101)",
        example: 1.5,
      }),
    freeRoundsId: z
      .string()
      .max(64)
      .nullish()
      .openapi({
        description:
          "A free-round grant of this player's (`POST /free-rounds`): the spin uses one of its rounds at the grant's " +
          "wager, which the partner pays; the balance moves by the payout only, and the result's `freeRound` shows " +
          "the rounds left. No round left, the grant expired or cancelled, the player not in it, or another game: " +
          "409 KS-4218 saying which, nothing used or written. Another partner's or an unknown grant: 404 KS-4219",
        example: "fr_0T9xYz12AbCdEfGhIjKlMn",
      }),
    forceTier: z
      .string()
      .max(FORCE_TIER_MAX_LENGTH)
      .nullish()
      .openapi({
        description:
          "Sandbox only: a tier of the game's PAR sheet (e.g. `T6`). The spin shows a random combination of " +
          "that tier drawn from the sheet, takes no outcome from the queue, and is otherwise a normal spin " +
          "(balance, listings, settlement, `spin.large_win`), answered with `forced: true` and `fairness: null`. " +
          "A production key, a tier the sheet does not have, or more than 16 characters: 400 KS-4101. " +
          "Absent or null: a normal spin.",
        example: "T6",
      }),
  })
  .openapi("SpinRequest");

export const spinRoute = createRoute({
  method: "post",
  path: "/spins",
  operationId: "createSpin",
  // Drawn by the spin path itself, with its outcome's LPOP (ratelimit/middleware.ts).
  "x-rate-limit-bucket": "spin" as const,
  tags: ["Spins"],
  summary: "Run a spin",
  description:
    "Takes the game's next pre-computed outcome and commits it with the player's new balance, atomically " +
    "(in sandbox, `forceTier` makes an outcome of that tier instead, for testing). " +
    "With `Idempotency-Key` (kept 24 h per partner and environment) a repeat of the same body returns the first " +
    "result (`Idempotent-Replayed: true`) and spins nothing; another body with the key is KS-4101. " +
    "Whether a refused or failed spin took the wager, and when to send it again: the " +
    "[error reference](/docs/errors) (a failed spin, KS-5003: [its entry](/docs/errors#ks-5003)).",
  request: {
    headers: idempotencyKeyHeader("spin"),
    body: jsonBody(SpinRequestBody, { gameId: 1, playerId: "player-42", wagerUsd: 1.5 }),
  },
  responses: {
    200: jsonResponse(SpinResultSchema, "The spin's outcome, presentation and the player's balance"),
    ...errorResponses(
      ...PARTNER_COMMON_ERRORS.filter((code) => code !== ErrorCode.RateLimited),
      ErrorCode.GameNotOwned,
      ErrorCode.InvalidRequest,
      ErrorCode.RequiredFieldMissing,
      ErrorCode.WagerOutOfRange,
      ErrorCode.GameInactive,
      ErrorCode.OutcomeQueueEmpty,
      ErrorCode.SpinRateLimited,
      ErrorCode.FreeRoundUnavailable,
      ErrorCode.FreeRoundsNotFound,
      ErrorCode.SpinFailed,
    ),
  },
});

export const spinsRouter = createRouter().openapi(spinRoute, async (c) => {
  const request = c.req.valid("json");
  const idempotencyKey = c.req.valid("header")["Idempotency-Key"];
  const bucket = c.var.rateLimit;
  const reply = await c.var.deps.spins.spin(c.var.partner, request, bucket, idempotencyKey);
  if (reply === null) throw refusal(bucket, bucket.draw!);
  if (reply.replayed) c.header("Idempotent-Replayed", "true");
  return c.json(await spinAnswer(c.var.deps, reply), 200);
});
