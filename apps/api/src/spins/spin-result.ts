import { z } from "@hono/zod-openapi";
import { microsToUsd, type Presentation } from "@outcomes/core";
import { Timestamp } from "../openapi.js";

export const PresentationBody = z
  .object({
    comboString: z.string().openapi({ description: "The payline (middle row) as text", example: "BELL-BELL-BELL" }),
    reelSymbols: z
      .array(z.array(z.string()))
      .openapi({ description: "One array per reel: the visible symbol ids, top to bottom" }),
    animationHints: z.object({
      winLine: z
        .array(z.number().int())
        .nullable()
        .openapi({ description: "Row index of the winning line on each reel; null for T0" }),
      celebration: z.enum(["none", "small", "big", "mega"]),
      highlight: z
        .array(z.array(z.boolean()))
        .openapi({ description: "highlight[reel][row]: a payline cell of a win" }),
    }),
  })
  .openapi("Presentation");

export const SpinFairness = z
  .object({
    blockId: z.number().int().openapi({ example: 1042 }),
    index: z.number().int().openapi({ description: "0-based position in the block", example: 17 }),
  })
  .openapi("SpinFairness");
export type SpinFairnessBody = z.infer<typeof SpinFairness>;

export const SpinResult = z
  .object({
    spinId: z.string().openapi({ example: "spn_0T9xYz12AbCdEfGhIjKlMn" }),
    gameId: z.number().int().openapi({ description: "The game's gameConfigId" }),
    playerId: z.string(),
    wagerUsd: z.number(),
    outcome: z.object({
      prizeTier: z.string().openapi({ example: "T3" }),
      multiplier: z.number().openapi({ example: 10 }),
      payoutUsd: z.number().openapi({ description: "wager × multiplier, floored to the micro-USD; 0 for no win" }),
    }),
    presentation: PresentationBody,
    balance: z.object({
      balanceUsd: z.number().openapi({ description: "The player's net position after this spin: Σ(payout − wager)" }),
      currency: z.literal("USD"),
    }),
    fairness: SpinFairness.nullable().openapi({
      description:
        "Where the outcome was committed before it was served: entry `index` of block `blockId` (its proof: " +
        "GET /spins/{spinId}/proof). null for a forced sandbox spin",
    }),
    createdAt: Timestamp,
  })
  .openapi("SpinResult");
export type SpinResultBody = z.infer<typeof SpinResult>;

/** A spin as stored or just recorded; the API shape is built from it in one place. */
export interface SpinFacts {
  id: string;
  gameId: number;
  externalPlayerId: string;
  wagerMicros: number;
  prizeTier: string;
  multiplierMillionths: number;
  payoutMicros: number;
  balanceAfterMicros: number;
  presentation: Presentation;
  fairness: SpinFairnessBody | null;
  createdAt: Date;
}

export function spinResultBody(spin: SpinFacts): SpinResultBody {
  return {
    spinId: spin.id,
    gameId: spin.gameId,
    playerId: spin.externalPlayerId,
    wagerUsd: microsToUsd(spin.wagerMicros),
    outcome: {
      prizeTier: spin.prizeTier,
      // Millionths → decimal with the same exact 6-place conversion as micro-USD.
      multiplier: microsToUsd(spin.multiplierMillionths),
      payoutUsd: microsToUsd(spin.payoutMicros),
    },
    presentation: orderedPresentation(spin.presentation),
    balance: { balanceUsd: microsToUsd(spin.balanceAfterMicros), currency: "USD" },
    fairness: spin.fairness,
    createdAt: spin.createdAt.toISOString(),
  };
}

/** jsonb stores keys in its own order; answers always list them in the documented one. */
function orderedPresentation(presentation: Presentation): Presentation {
  const hints = presentation.animationHints;
  return {
    comboString: presentation.comboString,
    reelSymbols: presentation.reelSymbols,
    animationHints: { winLine: hints.winLine, celebration: hints.celebration, highlight: hints.highlight },
  };
}

/** A stored idempotent response, given back in the documented key order. */
export function replayedBody(stored: unknown): SpinResultBody {
  const body = stored as SpinResultBody;
  return {
    spinId: body.spinId,
    gameId: body.gameId,
    playerId: body.playerId,
    wagerUsd: body.wagerUsd,
    outcome: {
      prizeTier: body.outcome.prizeTier,
      multiplier: body.outcome.multiplier,
      payoutUsd: body.outcome.payoutUsd,
    },
    presentation: orderedPresentation(body.presentation),
    balance: { balanceUsd: body.balance.balanceUsd, currency: "USD" },
    // Responses stored before spins carried `fairness` replay without one.
    fairness: body.fairness ? { blockId: body.fairness.blockId, index: body.fairness.index } : null,
    createdAt: body.createdAt,
  };
}
