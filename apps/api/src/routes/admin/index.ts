import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../context.js";
import { ADMIN_BASE, mountRouters } from "../../router.js";
import { apiKeysRouter } from "./api-keys.js";
import { adminGamesRouter } from "./games.js";
import { jobsRouter } from "./jobs.js";
import { adminJurisdictionsRouter } from "./jurisdictions.js";
import { maintenanceRouter } from "./maintenance.js";
import { adminParSheetsRouter } from "./par-sheets.js";
import { partnersRouter } from "./partners.js";
import { releaseRouter } from "./release.js";
import { adminSettlementsRouter } from "./settlements.js";
import { adminWebhooksRouter } from "./webhooks.js";

/** Every operator route group, mounted under /api/admin/v1 (operator token checked in app.ts). */
export function registerAdminRoutes(app: OpenAPIHono<AppEnv>) {
  mountRouters(app, ADMIN_BASE, [
    partnersRouter,
    apiKeysRouter,
    maintenanceRouter,
    adminSettlementsRouter,
    jobsRouter,
    adminParSheetsRouter,
    adminGamesRouter,
    releaseRouter,
    adminWebhooksRouter,
    adminJurisdictionsRouter,
  ]);
}
