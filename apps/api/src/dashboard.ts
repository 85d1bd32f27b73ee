import { createBullBoard } from "@bull-board/api";
import { BullMQAdapter } from "@bull-board/api/bullMQAdapter";
import { HonoAdapter } from "@bull-board/hono";
import { serveStatic } from "@hono/node-server/serve-static";
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppDeps, AppEnv } from "./context.js";
import { adminAuth } from "./middleware/admin-auth.js";

export const DASHBOARD_BASE = "/admin/queues";

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
  const auth = adminAuth({ basicChallenge: true });
  app.use(DASHBOARD_BASE, auth);
  app.use(`${DASHBOARD_BASE}/*`, auth);
  app.route(DASHBOARD_BASE, serverAdapter.registerPlugin());
}
