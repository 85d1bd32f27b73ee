import { z } from "@hono/zod-openapi";
import { ERROR_CODES, type ErrorCode } from "@outcomes/core";
import type { Context, TypedResponse } from "hono";

/** The error body every route may answer with. */
export const ErrorBody = z
  .object({
    message: z.string(),
    errorCode: z.string().openapi({ example: "KS-4101" }),
    requestId: z.string(),
    details: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
  })
  .openapi("Error");

/** OpenAPI `responses` entries for the codes a route can return, grouped by status. */
export function errorResponses(...codes: ErrorCode[]) {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) {
    const status = ERROR_CODES[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return Object.fromEntries(
    [...byStatus].map(([status, group]) => [
      status,
      {
        description: group.map((code) => `${code}: ${ERROR_CODES[code].message}`).join("; "),
        content: { "application/json": { schema: ErrorBody } },
      },
    ]),
  );
}

/** Codes every partner route can answer with. */
export const PARTNER_COMMON_ERRORS: ErrorCode[] = [
  "KS-4001",
  "KS-4002",
  "KS-4003",
  "KS-4004",
  "KS-4005",
  "KS-4292",
  "KS-5001",
  "KS-5002",
  "KS-5004",
];
/** Codes every operator route can answer with. */
export const ADMIN_COMMON_ERRORS: ErrorCode[] = ["KS-4001", "KS-4002", "KS-5001", "KS-5002"];

/** JSON body helper for `request.body`. */
export function jsonBody<T extends z.ZodType>(schema: T) {
  return { required: true, content: { "application/json": { schema } } } as const;
}

export function jsonResponse<T extends z.ZodType>(schema: T, description: string) {
  return { description, content: { "application/json": { schema } } } as const;
}

/**
 * A 200 answer of JSON serialised beforehand (a kept page): the same bytes and header `c.json`
 * writes for the value, typed as its answer so the route's typed handler accepts it.
 */
export function serialisedJson<T>(c: Context, json: Uint8Array<ArrayBuffer>): TypedResponse<T, 200, "json"> {
  return c.body(json, 200, { "Content-Type": "application/json" }) as unknown as TypedResponse<T, 200, "json">;
}
