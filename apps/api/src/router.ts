import { OpenAPIHono } from "@hono/zod-openapi";
import type { Context, MiddlewareHandler } from "hono";
import { matchedRoutes } from "hono/route";
import type { AppEnv } from "./context.js";
import { validationError } from "./errors.js";

export const PARTNER_BASE = "/api/partner/v1";
export const ADMIN_BASE = "/api/admin/v1";

/** A router whose zod failures become KS-4101/KS-4102 errors; every route group starts from one. */
export function createRouter() {
  return new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      if (!result.success) {
        throw validationError(result.error, (result as { data?: unknown }).data, result.target);
      }
    },
  });
}

/**
 * Whether the routes a request matched include `declaration` among their middleware. A declaration
 * does nothing itself: it lets a route choose how app-wide middleware, which runs before the route's
 * own, treats it (`spinBucket`, `withoutKey`).
 */
export function routeDeclares(c: Context, declaration: MiddlewareHandler<AppEnv>): boolean {
  return matchedRoutes(c).some((route) => route.handler === declaration);
}
