import type { MiddlewareHandler } from "hono";
import { clientAddresses } from "../auth/client-address.js";
import { unknownKeyGuard } from "../auth/failed-auth-throttle.js";
import type { AppEnv } from "../context.js";

/** Declared at a partner path that needs no key and draws from no bucket (the API description). */
export const withoutKey: MiddlewareHandler<AppEnv> = (_c, next) => next();

/**
 * Maintenance first (no store look-up while down), then the API key; look-ups of keys this process
 * has not found before are counted against the client's address, but for keys known to exist
 * (auth/failed-auth-throttle.ts).
 */
export function partnerAuth(trustedProxies: readonly string[] = []): MiddlewareHandler<AppEnv> {
  const clientAddress = clientAddresses(trustedProxies);
  return async (c, next) => {
    const deps = c.get("deps");
    await deps.maintenance.assertOff();
    const guard = unknownKeyGuard(
      deps.redis,
      deps.keys,
      () => clientAddress(c),
      (error) => deps.logger.warn({ err: error }, "unknown-key throttle unavailable; key looked up anyway"),
    );
    c.set("partner", await deps.keyVerifier.verify(c.req.header("X-API-Key"), guard));
    await next();
  };
}
