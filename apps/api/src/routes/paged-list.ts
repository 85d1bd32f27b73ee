import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { ErrorCode } from "@outcomes/core";
import type { PageWindow } from "@outcomes/db";
import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "../context.js";
import { errorResponses, jsonResponse } from "../openapi.js";
import { queryInteger } from "./query-integer.js";

/** `page` from 1 (default 1), `limit` 1..100 (default 20); anything else KS-4101. */
export const PageQuery = z.object({
  page: queryInteger({ min: 1, max: Number.MAX_SAFE_INTEGER, fallback: 1 }),
  limit: queryInteger({ min: 1, max: 100, fallback: 20 }),
});
type Page = z.infer<typeof PageQuery>;

/** The rows a page asks the repositories for. */
export function pageWindow(page: Page): PageWindow {
  return { limit: page.limit, offset: (page.page - 1) * page.limit };
}

/** The paging fields of every list schema, after the list itself. */
const PageFields = { page: z.number().int(), limit: z.number().int(), total: z.number().int() };

/** The paging fields of every list answer: the page asked for and the total across pages. */
export function pageFields(page: Page, total: number): { page: number; limit: number; total: number } {
  return { page: page.page, limit: page.limit, total };
}

/** A list schema: the items under `key`, then the paging fields; `name` is its OpenAPI component. */
export function pageSchema(name: string, key: string, item: z.ZodType) {
  return z.object({ [key]: z.array(item), ...PageFields } as z.ZodRawShape).openapi(name);
}

const NoParams = z.object({});

/**
 * Registers `GET path`: one page of records, newest first, as `{[key]: items, page, limit, total}`.
 * Every list route answers its page query's KS-4101 after the common codes, then its own `errors`.
 */
export function pagedListRoute<Row, Params extends z.ZodObject = typeof NoParams>(
  router: OpenAPIHono<AppEnv>,
  route: {
    path: string;
    /** Stable camelCase name of the operation (generated clients name their methods by it). */
    operationId: string;
    tags: string[];
    summary: string;
    /** The operation's description, beyond its summary. */
    about?: string;
    /** Run ahead of the page query's validation (a release gate: `gated`). */
    middleware?: MiddlewareHandler<AppEnv>[];
    params?: Params;
    /** The list component: its name, the key holding the items, and the item schema. */
    schema: { name: string; key: string; item: z.ZodType };
    /** The 200 answer's description. */
    description: string;
    common: ErrorCode[];
    errors?: ErrorCode[];
    list: (c: Context<AppEnv>, params: z.infer<Params>, window: PageWindow) => Promise<{ rows: Row[]; total: number }>;
    present: (row: Row, c: Context<AppEnv>) => unknown;
  },
): void {
  const list = pageSchema(route.schema.name, route.schema.key, route.schema.item);
  router.openapi(
    createRoute({
      method: "get",
      path: route.path,
      operationId: route.operationId,
      tags: route.tags,
      summary: route.summary,
      description: route.about,
      middleware: route.middleware,
      request: { params: route.params ?? NoParams, query: PageQuery },
      responses: {
        200: jsonResponse(list, route.description),
        ...errorResponses(...route.common, ErrorCode.InvalidRequest, ...(route.errors ?? [])),
      },
    }),
    async (c) => {
      const page = c.req.valid("query");
      // Without `params` the route validates the empty NoParams: `{}` is then Params' output.
      const params = c.req.valid("param") as z.infer<Params>;
      const result = await route.list(c, params, pageWindow(page));
      const items = result.rows.map((row) => route.present(row, c));
      return c.json({ [route.schema.key]: items, ...pageFields(page, result.total) }, 200);
    },
  );
}
