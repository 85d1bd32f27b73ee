import { createRoute, z } from "@hono/zod-openapi";
import { ErrorCode, ServiceError } from "@outcomes/core";
import { SpinResultSchema } from "@outcomes/records";
import type { Context } from "hono";
import type { AppEnv } from "../../context.js";
import { validationError } from "../../errors.js";
import { errorResponses, jsonBody, jsonResponse, PARTNER_COMMON_ERRORS } from "../../openapi.js";
import { rateLimitHeaders, refusal } from "../../ratelimit/index.js";
import { createRouter } from "../../router.js";
import type { SpinAnswer } from "../../spins/spin-service.js";
import { parseSpinRequest, SpinRequestBody, serializeSpinResult } from "./spin-json.js";
import { withVoidSince } from "./spin-recall.js";

const JSON_CONTENT = { "Content-Type": "application/json" };

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

const SpinHeaders = idempotencyKeyHeader("spin");

/** The request's `Idempotency-Key`, checked by the header schema the OpenAPI document declares (KS-4101). */
function idempotencyKeyOf(c: Context<AppEnv>): string | undefined {
  const key = c.req.header("Idempotency-Key");
  if (key === undefined || (key.length <= 255 && key.trim() !== "")) return key;
  const parsed = SpinHeaders.safeParse({ "Idempotency-Key": key });
  throw parsed.success ? new ServiceError(ErrorCode.InvalidRequest) : validationError(parsed.error, key, "header");
}

/**
 * POST /spins, declared in the OpenAPI document by `spinRoute` and served by a handler of its own:
 * its body is parsed by the schema's compiled check (spin-json.ts) rather than by a validator
 * middleware, and it answers with the spin bucket's decision in its headers, every request drawing
 * once (one the pipeline ended before its draw draws here).
 */
export const spinsRouter = createRouter();
spinsRouter.openAPIRegistry.registerPath(spinRoute);
spinsRouter.post("/spins", async (c) => {
  const deps = c.get("deps");
  const partner = c.get("partner");
  let answer: SpinAnswer;
  try {
    const request = parseSpinRequest(c.req.header("Content-Type"), await c.req.text());
    answer = await deps.spins.spin(partner, request, idempotencyKeyOf(c));
  } catch (error) {
    if (!(error instanceof ServiceError)) throw error;
    answer = { failed: error, decision: null };
  }
  const decision =
    "overLimit" in answer ? answer.overLimit : (answer.decision ?? (await deps.limiter.limit(partner, "spin")));
  c.set("rateLimit", decision);
  for (const [name, value] of Object.entries(rateLimitHeaders(decision))) c.header(name, value);
  if (!decision.admitted) throw refusal(decision);
  if ("failed" in answer) throw answer.failed;
  if ("overLimit" in answer) throw refusal(answer.overLimit);
  if (answer.spun.replayed) c.header("Idempotent-Replayed", "true");
  let body = answer.spun.replayed ? await withVoidSince(deps, answer.spun.body) : answer.spun.body;
  // Release 2 answers no session: neither does release 3 until its rollout has finished.
  if (body.session && !(await deps.rollout.on("jurisdictions"))) body = { ...body, session: undefined };
  return c.body(serializeSpinResult(body), 200, JSON_CONTENT);
});
