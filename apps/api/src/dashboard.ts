import { createBullBoard } from "@bull-board/api";
import { BullMQAdapter } from "@bull-board/api/bullMQAdapter";
import { HonoAdapter } from "@bull-board/hono";
import { serveStatic } from "@hono/node-server/serve-static";
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import type { AppDeps, AppEnv } from "./context.js";
import { adminAuth } from "./middleware/admin-auth.js";

export const DASHBOARD_BASE = "/admin/queues";

/** A `<link>` to another site: Bull Board's page links Google Fonts (its CSS falls back to system fonts). */
const EXTERNAL_LINK = /<link\b[^>]*\bhref="https?:\/\/[^>]*>\s*/g;

/** Everything from the service itself; the page has inline style attributes. */
const DASHBOARD_CSP =
  "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; object-src 'none'; base-uri 'self'; frame-ancestors 'none'";

/**
 * The board's page loads nothing from outside, so it works where browsers have no internet (an
 * air-gapped operator network) and tells no other site that an operator is looking.
 */
const selfContained: MiddlewareHandler = async (c, next) => {
  await next();
  if (!c.res.headers.get("content-type")?.startsWith("text/html")) return;
  const html = (await c.res.text()).replace(EXTERNAL_LINK, "");
  const headers = new Headers(c.res.headers);
  headers.delete("content-length");
  headers.set("Content-Security-Policy", DASHBOARD_CSP);
  c.res = new Response(html, { status: c.res.status, headers });
};

/**
 * Bull Board over every queue of the catalog, behind the operator token. Browsers get a basic-auth
 * prompt (the token is the password, any user name); scripts may send `Authorization: Bearer`.
 */
export function registerDashboard(app: OpenAPIHono<AppEnv>, deps: AppDeps) {
  const serverAdapter = new HonoAdapter(serveStatic).setBasePath(DASHBOARD_BASE);
  createBullBoard({
    queues: Object.values(deps.producers.queues).map((queue) => new BullMQAdapter(queue)),
    serverAdapter,
    options: { uiConfig: { boardTitle: "Outcome service queues" } },
  });
  // `/admin/queues/*` covers `/admin/queues` itself too.
  app.use(`${DASHBOARD_BASE}/*`, adminAuth({ basicChallenge: true }), selfContained);
  app.route(DASHBOARD_BASE, serverAdapter.registerPlugin());
}
