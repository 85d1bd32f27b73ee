import { z } from "@hono/zod-openapi";
import { ErrorCode, ServiceError } from "@outcomes/core";
import { type SpinResultBody, SpinResultSchema } from "@outcomes/records";
import { Ajv } from "ajv";
import fastJson from "fast-json-stringify";
import { validationError } from "../../errors.js";
import { FORCE_TIER_MAX_LENGTH } from "../../spins/forced-outcomes.js";
import type { SpinRequest } from "../../spins/spin-order.js";
import { hasAtMostSixDecimals } from "../../spins/wager.js";

/** Letters, digits and `-_.:@`, 1 to 128 characters (CONTRACT §4 Spins). */
export const PLAYER_ID_PATTERN = /^[A-Za-z0-9\-_.:@]{1,128}$/;

/** POST /spins's body: the source of truth of its OpenAPI description and of the parser below. */
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

/** A schema as JSON Schema draft 7, which ajv and fast-json-stringify compile. */
function jsonSchemaOf(schema: z.ZodType, io: "input" | "output"): Record<string, unknown> {
  return z.toJSONSchema(schema, { target: "draft-7", io, unrepresentable: "any" }) as Record<string, unknown>;
}

/**
 * The body's shape checked by code ajv compiles from the zod schema (its refinement, six decimals,
 * by the same function). A body it passes is one the zod schema passes too (spin-json.unit.test.ts
 * proves it on generated bodies), so zod runs only on bodies it refuses, to name every problem as
 * the other routes do.
 */
const hasSpinShape = new Ajv({ strict: false }).compile<SpinRequest>(jsonSchemaOf(SpinRequestBody, "input"));

/** The JSON media types a body is read as (those the other routes' validators accept). */
const JSON_CONTENT_TYPE = /^application\/([a-z-.]+\+)?json(;\s*[a-zA-Z0-9-]+=([^;]+))*$/i;

/**
 * POST /spins's body from its text, as every other route's validators read theirs: a body of
 * another media type (or one without a type) is KS-4101 "Unsupported Media Type", malformed JSON
 * KS-4101, no body at all `{}` (so KS-4102 names the missing fields).
 */
export function parseSpinRequest(contentType: string | undefined, text: string): SpinRequest {
  let body: unknown = {};
  if (contentType !== undefined ? !JSON_CONTENT_TYPE.test(contentType) : text !== "") {
    throw new ServiceError(ErrorCode.InvalidRequest, { message: "Unsupported Media Type" });
  }
  if (contentType !== undefined) {
    try {
      body = JSON.parse(text);
    } catch {
      throw new ServiceError(ErrorCode.InvalidRequest, { message: "Malformed JSON in request body" });
    }
  }
  if (hasSpinShape(body) && (body.wagerUsd === undefined || hasAtMostSixDecimals(body.wagerUsd))) return body;
  const parsed = SpinRequestBody.safeParse(body);
  if (!parsed.success) throw validationError(parsed.error, body, "json");
  return parsed.data;
}

/** `anyOf: [X, {type: "null"}]` as X with `nullable`: fast-json-stringify then writes it without validating it. */
function nullableAsKeyword(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(nullableAsKeyword);
  if (schema === null || typeof schema !== "object") return schema;
  const node = schema as Record<string, unknown>;
  const options = node.anyOf as Array<Record<string, unknown>> | undefined;
  if (options?.length === 2 && options[1]?.type === "null")
    return { ...(nullableAsKeyword(options[0]) as object), nullable: true };
  return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, nullableAsKeyword(value)]));
}

/**
 * The spin result as JSON, by code fast-json-stringify compiles from the record's zod schema: the
 * same text as `JSON.stringify` of the presented body (spin-json.unit.test.ts), in about half its time.
 */
export const serializeSpinResult: (body: SpinResultBody) => string = fastJson(
  nullableAsKeyword(jsonSchemaOf(SpinResultSchema, "output")) as Parameters<typeof fastJson>[0],
);
