import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../context.js";
import { mountRouters, PARTNER_BASE } from "../../router.js";
import { blocksRouter } from "./blocks.js";
import { eventsRouter } from "./events.js";
import { freeRoundsRouter } from "./free-rounds.js";
import { gamesRouter } from "./games.js";
import { parSheetsRouter } from "./par-sheets.js";
import { playersRouter } from "./players.js";
import { protectionRouter } from "./protection.js";
import { replayLinksRouter } from "./replay-links.js";
import { settlementsRouter } from "./settlements.js";
import { spinRecallRouter } from "./spin-recall.js";
import { spinsRouter } from "./spins.js";
import { webhookDeliveriesRouter } from "./webhook-deliveries.js";
import { webhookSecretsRouter } from "./webhook-secrets.js";
import { webhooksRouter } from "./webhooks.js";

/** Every partner route group, mounted under /api/partner/v1 (auth and rate limit are applied in app.ts). */
export function registerPartnerRoutes(app: OpenAPIHono<AppEnv>) {
  mountRouters(app, PARTNER_BASE, [
    gamesRouter,
    parSheetsRouter,
    spinsRouter,
    spinRecallRouter,
    replayLinksRouter,
    blocksRouter,
    playersRouter,
    protectionRouter,
    webhooksRouter,
    webhookDeliveriesRouter,
    webhookSecretsRouter,
    eventsRouter,
    settlementsRouter,
    freeRoundsRouter,
  ]);
}
