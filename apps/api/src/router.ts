import { OpenAPIHono, type RouteConfig } from "@hono/zod-openapi";
import type { Context, MiddlewareHandler } from "hono";
import { matchedRoutes } from "hono/route";
import type { AppEnv } from "./context.js";
import { validationError } from "./errors.js";
import { emptyBodyIsAbsent } from "./middleware/body.js";

export const PARTNER_BASE = "/api/partner/v1";
export const ADMIN_BASE = "/api/admin/v1";

/**
 * A router whose zod failures become KS-4101/KS-4102 errors, and whose routes with an optional JSON
 * body (`required: false`) take an empty one as none (`emptyBodyIsAbsent`); every route group
 * starts from one.
 */
export function createRouter() {
  const router = new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      if (!result.success) {
        throw validationError(result.error, (result as { data?: unknown }).data, result.target);
      }
    },
  });
  const openapi = router.openapi;
  router.openapi = ((route, handler, hook) => openapi(emptyBodyAsAbsent(route), handler, hook)) as typeof openapi;
  return router;
}

/** Mounts route groups under one base, in the order given (the order of the OpenAPI document's paths). */
export function mountRouters(
  app: OpenAPIHono<AppEnv>,
  base: string,
  routers: readonly OpenAPIHono<AppEnv, any, any>[],
) {
  for (const router of routers) app.route(base, router);
}

/** A route with an optional JSON body gets `emptyBodyIsAbsent` ahead of its own middleware. */
function emptyBodyAsAbsent<R extends RouteConfig>(route: R): R {
  if (route.request?.body?.required !== false) return route;
  return { ...route, middleware: [emptyBodyIsAbsent, ...[route.middleware ?? []].flat()] };
}

/**
 * Whether the routes a request matched include `declaration` among their middleware. A declaration
 * does nothing itself: it lets a route choose how app-wide middleware, which runs before the route's
 * own, treats it (`withoutKey`).
 */
export function routeDeclares(c: Context, declaration: MiddlewareHandler<AppEnv>): boolean {
  return matchedRoutes(c).some((route) => route.handler === declaration);
}
