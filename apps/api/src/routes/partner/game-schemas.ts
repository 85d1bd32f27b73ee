import { z } from "@hono/zod-openapi";
import { MAX_GAME_ID, parseScaledDecimal, usdToMicros } from "@outcomes/core";
import { integerPathParam } from "../../openapi.js";

/**
 * A positive USD amount with at most 6 decimals, within the exact range (anything else KS-4101, the
 * message naming which rule: `9007199254.75` has two decimals but is past 2^53 − 1 micro-USD).
 */
const UsdAmount = z
  .number()
  .positive("must be positive")
  .superRefine((usd, ctx) => {
    if (usdToMicros(usd) !== null) return;
    const tooPrecise = parseScaledDecimal(String(usd)) === null;
    ctx.addIssue({
      code: "custom",
      message: tooPrecise
        ? "at most 6 decimal places"
        : "past the exact range of amounts (2^53 − 1 micro-USD, about 9007199254.74 USD)",
    });
  })
  .openapi({ example: 100 });

export const RegisterGameBody = z
  .object({
    parSheetId: z.string().min(1).max(64).openapi({ description: "An ACTIVE PAR sheet of yours" }),
    name: z.string().trim().min(1).max(100).openapi({ description: "Unique per partner and environment" }),
    minWagerUsd: UsdAmount.nullish().openapi({ description: "Absent or null: any positive wager up to the maximum" }),
    maxWagerUsd: UsdAmount,
    largeWinThresholdUsd: UsdAmount.nullish().openapi({
      description: "Payout from which spin.large_win fires; absent or null: LARGE_WIN_THRESHOLD_USD",
    }),
  })
  .openapi("RegisterGame");

export const UpdateGameBody = z
  .strictObject({
    isActive: z.boolean().optional(),
    minWagerUsd: UsdAmount.nullable().optional().openapi({ description: "null removes the minimum" }),
    maxWagerUsd: UsdAmount.optional(),
    largeWinThresholdUsd: UsdAmount.nullable().optional().openapi({ description: "null restores the default" }),
  })
  .openapi("UpdateGame", { description: "Only the fields sent change; unknown fields are refused (KS-4101)." });

export const GameParams = z.object({
  gameId: integerPathParam("gameId", { format: "int32", maximum: MAX_GAME_ID, example: 1 }),
});

/** Path ids are parsed by the same rule everywhere (core). */
export { parseGameId } from "@outcomes/core";

/** JSON amounts → micro-USD (already checked by the schema); null and undefined pass through. */
export function toMicros<T extends number | null | undefined>(usd: T): T extends number ? number : T {
  return (typeof usd === "number" ? usdToMicros(usd) : usd) as T extends number ? number : T;
}
