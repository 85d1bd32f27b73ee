import { createRoute, z } from "@hono/zod-openapi";
import { couldBeId, ErrorCode, ServiceError } from "@outcomes/core";
import { findSpinVoid, requireOwnSpin } from "@outcomes/db";
import {
  presentStoredSpin,
  presentVoid,
  type SpinResultBody,
  SpinResultSchema,
  VerifiableSpinSchema,
} from "@outcomes/records";
import type { AppDeps } from "../../context.js";
import { errorResponses, jsonBody, jsonResponse, PARTNER_COMMON_ERRORS } from "../../openapi.js";
import { createRouter } from "../../router.js";
import { askedViews, includeProof, withViews } from "./spin-views.js";

// Game recall and voids (CONTRACT §13, docs/spins.md "Voids and recall"): parse, call the void
// service (voids/void-service.ts), present.

/** A replayed spin as first answered, with its void if one came since. */
export async function withVoidSince(deps: AppDeps, body: SpinResultBody): Promise<SpinResultBody> {
  return { ...body, voided: presentVoid(await findSpinVoid(deps.db, body.spinId)) };
}

/** The most a void's reason holds: the partner's note, not a document. */
const VOID_REASON_MAX_LENGTH = 500;

const VoidBody = z
  .object({
    reason: z
      .string()
      .min(1)
      .max(VOID_REASON_MAX_LENGTH)
      .openapi({
        description: `Why (1..${VOID_REASON_MAX_LENGTH} characters, trimmed; missing or blank: KS-4102), e.g. the wallet's refusal`,
        example: "Wallet refused the debit: insufficient funds",
      }),
  })
  .openapi("VoidSpin");

const SpinParams = z.object({
  spinId: z.string().openapi({ param: { name: "spinId", in: "path" }, example: "spn_0T9xYz12AbCdEfGhIjKlMn" }),
});

const tags = ["Spins"];

function ownSpinId(spinId: string): string {
  // Text no id of ours has names nothing stored (and U+0000 must not reach Postgres).
  if (!couldBeId(spinId)) throw new ServiceError(ErrorCode.NotFound, { message: "Spin not found" });
  return spinId;
}

export const spinRecallRouter = createRouter();

spinRecallRouter.openapi(
  createRoute({
    method: "get",
    path: "/spins/{spinId}",
    operationId: "getSpin",
    tags,
    summary: "Get a spin as it was first answered (game recall)",
    description:
      "The spin result exactly as `POST /spins` first answered it (outcome, presentation, the balance after it), " +
      "plus `voided`. With `?include=proof` also its inclusion `proof` and its `block`: one request (counted once " +
      "by the rate limit) gives a verifier all `verifySpinProof` needs (available once `release finish` has run " +
      "for release 3; until then the parameter is ignored). Another partner's or environment's spin, or an " +
      "unknown id: 404 KS-4215.",
    request: { params: SpinParams, query: z.object({ include: includeProof }) },
    responses: {
      200: jsonResponse(VerifiableSpinSchema, "The spin (with `?include=proof`: its proof and block)"),
      ...errorResponses(...PARTNER_COMMON_ERRORS, ErrorCode.InvalidRequest, ErrorCode.NotFound),
    },
  }),
  async (c) => {
    const spinId = ownSpinId(c.req.valid("param").spinId);
    const { db } = c.var.deps;
    const found = await requireOwnSpin(db, c.var.partner, spinId);
    const views = await askedViews(c, c.req.valid("query"));
    const [spin] = await withViews(c, db, [presentStoredSpin(found, found.externalPlayerId)], views);
    return c.json(spin, 200);
  },
);

spinRecallRouter.openapi(
  createRoute({
    method: "post",
    path: "/spins/{spinId}/void",
    operationId: "voidSpin",
    tags,
    summary: "Void a spin your own step after it failed for",
    description:
      "For when the partner's step after a spin fails (its wallet refused the debit, the player's session was " +
      "closed): the spin is undone, atomically: the player's `balanceUsd` moves by wager − payout, and " +
      "`totalSpins`, `totalWageredUsd`, `totalPaidUsd` no longer count it; the settlement report of the UTC day " +
      "the void is made counts it (`voidedSpins`, `voidedWageredUsd`, `voidedPaidUsd`), reports already " +
      "generated never change; `spin.voided` goes to webhooks and the event log. The outcome stays used: never " +
      "served again, its proof still verifies, and the revealed entries show it with `voided: true`. " +
      "Within `VOID_WINDOW_HOURS` (default 72) of the spin's `createdAt`, else 409 KS-4217. A reversal that would " +
      "take one of the player's figures past 9,007,199,254.740991 USD (the most a JSON number shows exactly) is " +
      "400 KS-4103, nothing written. Voiding a voided " +
      "spin answers 200 with the first void and changes nothing, so it is safe to retry. Another partner's or " +
      "environment's spin, or an unknown id: 404 KS-4215.",
    request: {
      params: SpinParams,
      body: jsonBody(VoidBody, { reason: "Wallet refused the debit: insufficient funds" }),
    },
    responses: {
      200: jsonResponse(SpinResultSchema, "The spin, with `voided: {voidedAt, reason}`"),
      ...errorResponses(
        ...PARTNER_COMMON_ERRORS,
        ErrorCode.InvalidRequest,
        ErrorCode.RequiredFieldMissing,
        ErrorCode.WagerOutOfRange,
        ErrorCode.NotFound,
        ErrorCode.SpinNotVoidable,
      ),
    },
  }),
  async (c) => {
    const spinId = ownSpinId(c.req.valid("param").spinId);
    const reason = c.req.valid("json").reason.trim();
    if (reason === "") {
      throw new ServiceError(ErrorCode.RequiredFieldMissing, {
        details: [{ path: "reason", message: "A void needs a reason" }],
      });
    }
    const voided = await c.var.deps.voids.void(c.var.partner, spinId, reason);
    return c.json(presentStoredSpin(voided.spin, voided.spin.externalPlayerId), 200);
  },
);
