import { ErrorCode, redactApiKeys, redactReplayTokens, ServiceError } from "@outcomes/core";
import type { AppDeps } from "./context.js";
import { guardDashboard, registerDashboard } from "./dashboard.js";
import { registerDocs } from "./docs.js";
import { renderError } from "./errors.js";
import { httpMetrics, observeApiState } from "./metrics.js";
import { adminAuth } from "./middleware/admin-auth.js";
import { nodeBody } from "./middleware/body.js";
import { jsonGuard } from "./middleware/json-guard.js";
import { partnerAuth, withoutKey } from "./middleware/partner-auth.js";
import { rateLimit } from "./ratelimit/middleware.js";
import { registerReplayRoutes } from "./replay/replay-routes.js";
import { gatheredHeaders } from "./respond.js";
import { ADMIN_BASE, createRouter, PARTNER_BASE, routeDeclares } from "./router.js";
import { registerAdminRoutes } from "./routes/admin/index.js";
import { registerHealthRoutes } from "./routes/health.js";
import { registerPartnerRoutes } from "./routes/partner/index.js";
import { spinRoute } from "./routes/partner/spins.js";

const MAX_BODY_BYTES = 1024 * 1024;

export function createApp(deps: AppDeps) {
  const app = createRouter();

  app.use("*", gatheredHeaders());
  app.use("*", httpMetrics());
  app.use("*", async (c, next) => {
    c.set("deps", deps);
    const started = performance.now();
    await next();
    // Spins (the requests drawing the spin bucket) are the hot path: logged at debug only; everything
    // else at info.
    const level = c.res.status < 400 && c.get("rateLimit")?.bucket === "spin" ? "debug" : "info";
    // Not even the log object is built for a level that is off (every spin, in production).
    if (!deps.logger.isLevelEnabled(level)) return;
    deps.logger[level]({
      requestId: c.get("requestId"),
      method: c.req.method,
      // A key pasted into a URL by mistake must not reach the log store.
      path: redactReplayTokens(redactApiKeys(c.req.path)),
      status: c.res.status,
      ms: Math.round((performance.now() - started) * 10) / 10,
    });
  });
  observeApiState(deps);
  registerHealthRoutes(app);

  // Every caller is authenticated from its headers before any body is read: a request without a
  // key or token is answered at once, and cannot hold a connection and a buffer by sending slowly.
  const authenticate = partnerAuth(deps.env.TRUSTED_PROXIES);
  const limit = rateLimit(PARTNER_BASE, [spinRoute]);
  app.use(`${PARTNER_BASE}/*`, async (c, next) => {
    // Every partner route needs a key and draws from a bucket, but one declared `withoutKey`.
    if (routeDeclares(c, withoutKey)) return next();
    return authenticate(c, async () => {
      await limit(c, next);
    });
  });
  app.use(`${ADMIN_BASE}/*`, adminAuth());
  guardDashboard(app);
  app.use("*", nodeBody(MAX_BODY_BYTES));
  registerDashboard(app, deps);
  // After authentication: an anonymous caller learns nothing about its body.
  app.use("*", jsonGuard());
  // After the operator auth: a handler registered earlier would answer before it runs.
  registerDocs(app);

  registerPartnerRoutes(app);
  registerAdminRoutes(app);
  registerReplayRoutes(app);

  app.notFound(() => {
    throw new ServiceError(ErrorCode.NotFound);
  });
  app.onError((error, c) => renderError(error, c));
  return app;
}
