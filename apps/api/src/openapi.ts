import { z } from "@hono/zod-openapi";
import { ERROR_CODES, type ErrorCode } from "@outcomes/core";
import type { PageWindow } from "@outcomes/db";

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

/** `page` from 1 (default 1), `limit` 1..100 (default 20); anything else KS-4101. */
export const PageQuery = z.object({
  page: z.coerce.number().int().min(1).default(1).openapi({ example: 1 }),
  limit: z.coerce.number().int().min(1).max(100).default(20).openapi({ example: 20 }),
});
export type Page = z.infer<typeof PageQuery>;

/** The rows a page asks the repositories for. */
export function pageWindow(page: Page): PageWindow {
  return { limit: page.limit, offset: (page.page - 1) * page.limit };
}

/** The paging fields of every list schema, after the list itself. */
export const PageFields = { page: z.number().int(), limit: z.number().int(), total: z.number().int() };

/** The paging fields of every list answer: the page asked for and the total across pages. */
export function pageFields(page: Page, total: number): { page: number; limit: number; total: number } {
  return { page: page.page, limit: page.limit, total };
}

/** JSON body helper for `request.body`. */
export function jsonBody<T extends z.ZodType>(schema: T) {
  return { required: true, content: { "application/json": { schema } } } as const;
}

export function jsonResponse<T extends z.ZodType>(schema: T, description: string) {
  return { description, content: { "application/json": { schema } } } as const;
}
