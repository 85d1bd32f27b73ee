import { z } from "@hono/zod-openapi";
import { CELEBRATIONS, microsToUsd, type OutcomePosition, type Presentation } from "@outcomes/core";
import type { FreeRoundFacts, SpinVoidFacts, StoredSpin } from "@outcomes/db";
import { TimestampSchema } from "./fields.js";

export const PresentationSchema = z
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
      celebration: z.enum(CELEBRATIONS),
      highlight: z
        .array(z.array(z.boolean()))
        .openapi({ description: "highlight[reel][row]: a payline cell of a win" }),
    }),
  })
  .openapi("Presentation");

/** A spin's void (CONTRACT §13). */
export const SpinVoidSchema = z
  .object({
    voidedAt: TimestampSchema,
    reason: z.string().openapi({ example: "Wallet refused the debit: insufficient funds" }),
  })
  .openapi("SpinVoid");

/** The free round a spin used (CONTRACT §14). */
export const SpinFreeRoundSchema = z
  .object({
    freeRoundsId: z.string().openapi({ example: "fr_0T9xYz12AbCdEfGhIjKlMn" }),
    roundsLeft: z.number().int().openapi({ description: "The player's rounds of the grant left after this spin" }),
  })
  .openapi("SpinFreeRound");

/** The player's session as it stood after the spin (CONTRACT §16; UKGC RTS 2E/13C: net position and time played). */
export const SpinSessionSchema = z
  .object({
    startedAt: TimestampSchema.openapi({ description: "The session's first spin: spins with gaps under 30 minutes" }),
    elapsedMs: z.number().int().openapi({ example: 754_000, description: "From the session's start to this spin" }),
    spins: z.number().int().openapi({ example: 42, description: "The session's spins, this one included" }),
    netUsd: z.number().openapi({
      example: -12.5,
      description: "The session's payouts minus its paid wagers (negative when the player is down)",
    }),
    reminderDue: z.boolean().openapi({
      description: "True on the first spin past each `sessionReminderMinutes` mark of the player's jurisdiction",
    }),
  })
  .openapi("SpinSession");

/** A spin as the spin endpoint answers it, and as a player's spin list and `GET /spins/{spinId}` show it. */
export const SpinResultSchema = z
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
    presentation: PresentationSchema,
    balance: z.object({
      balanceUsd: z.number().openapi({ description: "The player's net position after this spin: Σ(payout − wager)" }),
      currency: z.literal("USD"),
    }),
    createdAt: TimestampSchema,
    fairness: z
      .object({
        blockId: z.number().int().openapi({ description: "The outcome block the outcome was taken from" }),
        index: z.number().int().openapi({ description: "The outcome's entry in that block, from 0" }),
      })
      .nullable()
      .openapi({ description: "Where the outcome was recorded before it was served; null for a forced spin" }),
    forced: z.boolean().openapi({
      description: "True for a sandbox spin with `forceTier`: its outcome was drawn for it, not taken from a block",
    }),
    voided: SpinVoidSchema.nullable().openapi({
      description:
        "Always present: null until the spin is voided (`POST /spins/{spinId}/void`); then when and why, on every " +
        "later read and replay of the spin",
    }),
    freeRound: SpinFreeRoundSchema.nullable().openapi({
      description:
        "Always present: the free round this spin used (a spin with `freeRoundsId`: the partner paid `wagerUsd`, " +
        "the balance moved by the payout only); null on every other spin",
    }),
    session: SpinSessionSchema.optional().openapi({
      description:
        "On the answer of `POST /spins` (and its replays), once `release finish` has run for release 3; not on reads",
    }),
  })
  .openapi("SpinResult");
export type SpinResultBody = z.infer<typeof SpinResultSchema>;

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
  createdAt: Date;
  /** The block entry the outcome came from; null for a forced spin. */
  position: OutcomePosition | null;
  voided: SpinVoidFacts | null;
  freeRound: FreeRoundFacts | null;
  /** Just recorded: the player's session after it. */
  session?: SpinSessionFacts | null;
}

export interface SpinSessionFacts {
  startedAt: Date;
  spins: number;
  netMicros: number;
  reminderDue: boolean;
}

export function presentSpin(spin: SpinFacts): SpinResultBody {
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
    createdAt: spin.createdAt.toISOString(),
    fairness: spin.position && { blockId: spin.position.blockId, index: spin.position.index },
    forced: spin.position === null,
    voided: presentVoid(spin.voided),
    freeRound: spin.freeRound && { freeRoundsId: spin.freeRound.freeRoundsId, roundsLeft: spin.freeRound.roundsLeft },
    ...(spin.session ? { session: presentSession(spin.session, spin.createdAt) } : {}),
  };
}

function presentSession(session: SpinSessionFacts, spunAt: Date): NonNullable<SpinResultBody["session"]> {
  return {
    startedAt: session.startedAt.toISOString(),
    elapsedMs: Math.max(0, spunAt.getTime() - session.startedAt.getTime()),
    spins: session.spins,
    netUsd: microsToUsd(session.netMicros),
    reminderDue: session.reminderDue,
  };
}

export function presentVoid(voided: SpinVoidFacts | null): SpinResultBody["voided"] {
  return voided && { voidedAt: voided.voidedAt.toISOString(), reason: voided.reason };
}

/** A stored spin (with its void) of the player whose own id is `externalPlayerId`: the spin as first answered. */
export function presentStoredSpin(
  { spin: row, voided, freeRound }: StoredSpin,
  externalPlayerId: string,
): SpinResultBody {
  return presentSpin({
    id: row.id,
    gameId: row.gameId,
    externalPlayerId,
    wagerMicros: row.wagerMicros,
    prizeTier: row.prizeTier,
    multiplierMillionths: row.multiplierMillionths,
    payoutMicros: row.payoutMicros,
    balanceAfterMicros: row.balanceAfterMicros,
    // Written from the outcome's Presentation by the same statement as the spin.
    presentation: row.presentation as Presentation,
    createdAt: row.createdAt,
    position:
      row.blockId === null || row.outcomeIndex === null ? null : { blockId: row.blockId, index: row.outcomeIndex },
    voided,
    freeRound,
  });
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

/**
 * A stored idempotent response, given back in the documented key order. Records stored before
 * `fairness` and `forced` existed (kept 24 h) were of unforced spins whose position they lack. The
 * first answer was not voided: the caller shows the spin's void, if one came since.
 */
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
    createdAt: body.createdAt,
    fairness: body.fairness ? { blockId: body.fairness.blockId, index: body.fairness.index } : null,
    forced: body.forced ?? false,
    voided: null,
    freeRound: body.freeRound
      ? { freeRoundsId: body.freeRound.freeRoundsId, roundsLeft: body.freeRound.roundsLeft }
      : null,
    ...(body.session
      ? {
          session: {
            startedAt: body.session.startedAt,
            elapsedMs: body.session.elapsedMs,
            spins: body.session.spins,
            netUsd: body.session.netUsd,
            reminderDue: body.session.reminderDue,
          },
        }
      : {}),
  };
}
