import { z } from "@hono/zod-openapi";
import type { ReplaySpin, SpinVerification } from "@outcomes/db";
import { BlockSchema, presentBlock, presentSpinProof, SpinProofSchema } from "./block.js";
import { EnvironmentSchema, TimestampSchema } from "./fields.js";
import { PresentationSchema, presentStoredSpin, SpinResultSchema, SpinVoidSchema } from "./spin.js";

// Replay pages (CONTRACT §17) and the views that carry a spin's proof with it (issue #33: one
// request gives a verifier what it needs).

export const ReplayLinkSchema = z
  .object({
    url: z.string().openapi({
      description: "The replay page: open it in any browser, no API key; add `.json` for its data",
      example:
        "https://outcomes.example.com/replay/AZ3kq0V5bY2m1c8Qv7xJtA9s0dLw4ePf6gHiKjLmNoPqRsTuVwXyZ0123456789-_ab",
    }),
    expiresAt: TimestampSchema.openapi({ description: "After this the link answers 404, as an unknown one" }),
  })
  .openapi("ReplayLink");
export type ReplayLinkBody = z.infer<typeof ReplayLinkSchema>;

/** `?include=proof`: the spin's proof and its block beside it, so `verifySpinProof(spin, spin.proof, spin.block)` runs. */
const VerificationFields = {
  proof: SpinProofSchema.nullable()
    .optional()
    .openapi({
      description:
        "With `?include=proof`: the spin's inclusion proof, as `GET /spins/{spinId}/proof` answers it; null for a " +
        "forced sandbox spin and one whose block was sealed before provable fairness",
    }),
  block: BlockSchema.nullable()
    .optional()
    .openapi({
      description:
        "With `?include=proof`: the spin's block (its committed `merkleRoot` and `seedHash`, and `seed` once " +
        "revealed), as `GET /games/{gameId}/blocks/{blockId}` answers it; null when `proof` is",
    }),
};

export const VerifiableSpinSchema = SpinResultSchema.extend(VerificationFields).openapi("VerifiableSpin", {
  description: "A spin result; with `?include=proof` also its proof and its block",
});
export type VerifiableSpinBody = z.infer<typeof VerifiableSpinSchema>;

export const ListedSpinSchema = VerifiableSpinSchema.extend({
  replayUrl: z.string().optional().openapi({
    description: "With `?replayLinks=true`: a replay link of the spin with the default expiry (168 hours)",
  }),
}).openapi("ListedSpin", {
  description:
    "A spin of a player's list; with `?include=proof` also its proof and block, with `?replayLinks=true` a replay link",
});
export type ListedSpinBody = z.infer<typeof ListedSpinSchema>;

/** The `?include=proof` fields of a spin, from its verification (none: a forced spin, or no tree). */
export function presentVerification(verification: SpinVerification | null) {
  return verification
    ? { proof: presentSpinProof(verification.proof), block: presentBlock(verification.block) }
    : { proof: null, block: null };
}

const SheetSymbolSchema = z
  .object({
    id: z.string().openapi({ example: "SEVEN" }),
    name: z.string().openapi({ example: "Red Seven" }),
  })
  .openapi("SheetSymbol");

export const ReplaySchema = z
  .object({
    spinId: z.string().openapi({ example: "spn_0T9xYz12AbCdEfGhIjKlMn" }),
    environment: EnvironmentSchema,
    game: z.object({
      gameId: z.number().int(),
      name: z.string().openapi({ example: "Lucky Sevens" }),
      symbols: z.array(SheetSymbolSchema).openapi({ description: "The PAR sheet's symbols, in its order" }),
    }),
    createdAt: TimestampSchema,
    wagerUsd: z.number(),
    outcome: SpinResultSchema.shape.outcome,
    presentation: PresentationSchema,
    balance: SpinResultSchema.shape.balance,
    forced: z.boolean().openapi({ description: "A sandbox spin of a forced tier: drawn for it, so it has no proof" }),
    freeRound: z.boolean().openapi({ description: "A free round: the partner paid the wager" }),
    voided: SpinVoidSchema.nullable(),
    fairness: SpinResultSchema.shape.fairness,
    proof: SpinProofSchema.nullable().openapi({ description: "The inclusion proof; null when `fairness` is" }),
    block: BlockSchema.nullable().openapi({ description: "The spin's block and its commitments; null with `proof`" }),
    expiresAt: TimestampSchema.openapi({ description: "When this replay link stops working" }),
  })
  .openapi("Replay", {
    description:
      "A spin as its replay page shows it (no player id, no partner), with its proof and block to check it " +
      "(docs/fairness.md, Replay pages)",
  });
export type ReplayBody = z.infer<typeof ReplaySchema>;

export function presentReplay(found: ReplaySpin, expiresAt: Date): ReplayBody {
  const spin = presentStoredSpin(found, found.externalPlayerId);
  return {
    spinId: spin.spinId,
    environment: found.spin.environment,
    game: { gameId: spin.gameId, name: found.gameName, symbols: found.symbols },
    createdAt: spin.createdAt,
    wagerUsd: spin.wagerUsd,
    outcome: spin.outcome,
    presentation: spin.presentation,
    balance: spin.balance,
    forced: spin.forced,
    freeRound: spin.freeRound !== null,
    voided: spin.voided,
    fairness: spin.fairness,
    ...presentVerification(found.verification),
    expiresAt: expiresAt.toISOString(),
  };
}
