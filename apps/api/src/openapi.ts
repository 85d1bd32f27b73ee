import { z } from "@hono/zod-openapi";
import { ERROR_MESSAGES, ErrorCode } from "@outcomes/core";
import type { Context, TypedResponse } from "hono";
import { errorLink } from "./error-reference.js";
import { errorStatus } from "./error-status.js";

/** The error body every route may answer with. */
export const ErrorBody = z
  .object({
    message: z.string(),
    errorCode: z.string().openapi({ example: ErrorCode.InvalidRequest }),
    requestId: z.string(),
    details: z
      .union([
        z.array(z.object({ path: z.string(), message: z.string() })),
        z
          .record(z.string(), z.union([z.string(), z.number(), z.null()]))
          .openapi({ description: "A refusal's facts (KS-4220..4222, KS-4293), e.g. `{limit, period, remainingUsd}`" }),
      ])
      .optional(),
  })
  .openapi("Error");

/**
 * OpenAPI `responses` entries for the codes a route can return, grouped by status; each code links
 * its entry of the error reference (meaning, whether to retry, what to do).
 */
export function errorResponses(...codes: ErrorCode[]) {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) {
    const status = errorStatus(code);
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return Object.fromEntries(
    [...byStatus].map(([status, group]) => [
      status,
      {
        description: group.map((code) => `[${code}](${errorLink(code)}): ${ERROR_MESSAGES[code]}`).join("; "),
        content: { "application/json": { schema: ErrorBody } },
      },
    ]),
  );
}

/** Codes every partner route can answer with. */
export const PARTNER_COMMON_ERRORS: ErrorCode[] = [
  ErrorCode.MissingApiKey,
  ErrorCode.InvalidApiKey,
  ErrorCode.ApiKeyRevoked,
  ErrorCode.ApiKeyExpired,
  ErrorCode.PartnerDeactivated,
  ErrorCode.RateLimited,
  ErrorCode.Internal,
  ErrorCode.Maintenance,
  ErrorCode.AuthStoreFailed,
];
/** Codes every operator route can answer with. */
export const ADMIN_COMMON_ERRORS: ErrorCode[] = [
  ErrorCode.MissingApiKey,
  ErrorCode.InvalidApiKey,
  ErrorCode.Internal,
  ErrorCode.Maintenance,
];

/** A body `T` accepts, possibly deeply readonly (`as const` examples). */
type Example<T> = T extends readonly (infer Item)[]
  ? readonly Example<Item>[]
  : T extends object
    ? { readonly [K in keyof T]: Example<T[K]> }
    : T;

/**
 * JSON body helper for `request.body`. `example` is the body the interactive reference shows and sends
 * as it is (typed clients show it too), so it must be one the route accepts: openapi-clients.test.ts
 * sends every example to the service.
 */
export function jsonBody<T extends z.ZodType>(schema: T, example: Example<z.input<T>>) {
  return { required: true, content: { "application/json": { schema, example } } } as const;
}

/** `jsonBody` for a body that may be left out (an empty one counts as left out: createRouter). */
export function optionalJsonBody<T extends z.ZodType>(schema: T, example: Example<z.input<T>>) {
  return { required: false, content: { "application/json": { schema, example } } } as const;
}

/**
 * A path parameter that is an integer id (`gameId`, `blockId`). It is declared an integer, as the API
 * returns the id, but validated as the text a path segment is: the route's own parser answers text
 * that names nothing with its not-found code (KS-4006, KS-4201, KS-4215), as for any unknown id.
 */
export function integerPathParam(
  name: string,
  options: { format: "int32" | "int64"; maximum: number; example: number },
) {
  return z.string().openapi({ param: { name, in: "path" }, type: "integer", minimum: 1, ...options });
}

export function jsonResponse<T extends z.ZodType>(schema: T, description: string) {
  return { description, content: { "application/json": { schema } } } as const;
}

/**
 * A 200 answer of JSON serialised beforehand (a kept page): the same bytes and header `c.json`
 * writes for the value, typed as its answer so the route's typed handler accepts it.
 */
export function serialisedJson<T>(c: Context, json: string | Uint8Array<ArrayBuffer>): TypedResponse<T, 200, "json"> {
  return c.body(json, 200, { "Content-Type": "application/json" }) as unknown as TypedResponse<T, 200, "json">;
}
