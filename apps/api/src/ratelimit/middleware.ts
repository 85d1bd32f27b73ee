import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../context.js";
import { type Bucket, rateLimitHeaders, refusal } from "./limiter.js";

/** A route as declared (`createRoute`): its bucket is data on it, `x-rate-limit-bucket` (default `default`). */
export interface RouteWithBucket {
  method: string;
  path: string;
  "x-rate-limit-bucket"?: Bucket;
}

/**
 * Partner requests draw one token each (CONTRACT §9), from the bucket their route declares.
 * `default`: drawn here, before the handler, and refused here. A route declaring another bucket
 * (`spin`) draws and answers for itself (the spin path draws with its outcome's pop: one Redis
 * round trip). Declared routes have no path parameters, so a request is matched by its exact path.
 */
export function rateLimit(base: string, routes: readonly RouteWithBucket[]): MiddlewareHandler<AppEnv> {
  const ownDraw = new Set<string>();
  for (const route of routes) {
    if (route.path.includes("{")) throw new Error(`a route drawing its own bucket has no parameters: ${route.path}`);
    if (route["x-rate-limit-bucket"] && route["x-rate-limit-bucket"] !== "default") {
      ownDraw.add(`${route.method.toUpperCase()} ${base}${route.path}`);
    }
  }
  return async (c, next) => {
    if (ownDraw.has(`${c.req.method} ${c.req.path}`)) return next();
    const deps = c.get("deps");
    const decision = await deps.limiter.limit(c.get("partner"), "default");
    c.set("rateLimit", decision);
    for (const [name, value] of Object.entries(rateLimitHeaders(decision))) c.header(name, value);
    if (!decision.admitted) throw refusal(decision);
    await next();
  };
}
