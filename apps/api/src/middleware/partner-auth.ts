import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../context.js";

/** Maintenance first (no store look-up while down), then the API key. */
export function partnerAuth(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const { deps } = c.var;
    await deps.maintenance.assertOff();
    c.set("partner", await deps.keyVerifier.verify(c.req.header("X-API-Key")));
    await next();
  };
}
