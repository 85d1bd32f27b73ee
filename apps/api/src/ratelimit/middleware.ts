import type { Context, MiddlewareHandler } from "hono";
import { matchedRoutes } from "hono/route";
import type { AppEnv } from "../context.js";
import { type Bucket, type BucketDraw, bucketDraw, drawOnce, rateLimitHeaders, refusal } from "./buckets.js";
import type { Draw } from "./gcra.js";

/** A route as declared (`createRoute`): its bucket is data on it, `x-rate-limit-bucket` (default `default`). */
export interface RouteWithBucket {
  method: string;
  path: string;
  "x-rate-limit-bucket"?: Bucket;
}

/**
 * Partner requests draw one token each (CONTRACT §9), from the bucket their route declares.
 * `default`: drawn here, before the handler. Another bucket (`spin`): drawn by the route where it
 * does its work (the spin path, with its outcome's LPOP: one Redis round trip), and refused there;
 * here, once the request has ended, the draw's headers are set, and a request that ended without
 * drawing (an invalid body, a replay answered before it took an outcome) draws now, and is refused
 * when over the limit.
 */
export function rateLimit(base: string, routes: readonly RouteWithBucket[]): MiddlewareHandler<AppEnv> {
  const buckets = new Map(
    routes.map((route) => [`${route.method.toUpperCase()} ${base}${route.path}`, route["x-rate-limit-bucket"]]),
  );
  const bucketOf = (c: Context): Bucket => {
    for (const { method, path } of matchedRoutes(c)) {
      const bucket = buckets.get(`${method} ${path}`);
      if (bucket) return bucket;
    }
    return "default";
  };
  return async (c, next) => {
    const { deps, partner } = c.var;
    const bucket = bucketDraw(deps.env, deps.keys, partner, bucketOf(c));
    c.set("rateLimit", bucket);
    if (bucket.bucket === "default") {
      answer(c, bucket, await drawOnce(deps.redis, bucket), true);
      return next();
    }
    await next();
    const drawnByRoute = bucket.draw !== null;
    answer(c, bucket, await drawOnce(deps.redis, bucket), !drawnByRoute);
  };
}

function answer(c: Context, bucket: BucketDraw, draw: Draw, refuse: boolean): void {
  for (const [name, value] of Object.entries(rateLimitHeaders(bucket, draw))) c.header(name, value);
  if (refuse && !draw.allowed) throw refusal(bucket, draw);
}
