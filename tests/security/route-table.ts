import { SAMPLE_PAR_SHEET } from "@outcomes/core";
import { createRouter, PARTNER_BASE } from "../../apps/api/src/router.js";
import { registerAdminRoutes } from "../../apps/api/src/routes/admin/index.js";
import { registerPartnerRoutes } from "../../apps/api/src/routes/partner/index.js";
import type { World } from "./world.js";

/**
 * The one table of routes the security and hostile-input tests walk. The declared routes come from
 * the app's OpenAPI registry (the same `createRoute` definitions the server runs), so a route added
 * later appears there and `uncoveredRoutes` names it until it gets an entry below.
 */

export type Method = "get" | "post" | "put" | "patch" | "delete";

export interface DeclaredRoute {
  method: Method;
  /** OpenAPI form, e.g. `/api/partner/v1/games/{gameId}`. */
  path: string;
}

/** Every route the partner and operator routers declare. */
export function declaredRoutes(): DeclaredRoute[] {
  const app = createRouter();
  registerPartnerRoutes(app);
  registerAdminRoutes(app);
  return app.openAPIRegistry.definitions.flatMap((definition) =>
    definition.type === "route" ? [{ method: definition.route.method as Method, path: definition.route.path }] : [],
  );
}

/**
 * What a request of another partner or environment names, and how it must be refused (CONTRACT §2):
 * a resource in the path or body, a list that must not show it, or a creation the owner must not see.
 */
export type Foreign =
  | { kind: "game" | "parSheet" | "player" | "report" | "spin" | "webhook" | "freeRounds" }
  | { kind: "list"; field: string; ids: (world: World) => Array<string | number>; idOf: (item: any) => string | number }
  | { kind: "create"; listPath: string; field: string }
  /**
   * Names nothing of another partner: the request acts in the caller's own namespace (a player id is
   * the partner's own), answers 200, and leaves what the victim reads at `read` as it was.
   */
  | { kind: "namespaced"; read: string };

export interface PartnerRoute extends DeclaredRoute {
  /** Valid path parameters for a world's resources. */
  params?: (world: World) => Record<string, string>;
  /** Valid query (paging) parameters. */
  query?: Record<string, string>;
  /** A valid body naming the world's resources. */
  body?: (world: World) => unknown;
  /** The body may be left out (an empty one counts as left out). */
  bodyOptional?: true;
  foreign: Foreign;
  /** What a GET of the world's own resource answers when not 200 (it still finds it). */
  ownStatus?: number;
}

const PAGE = { page: "1", limit: "20" };
const gameParams = (w: World) => ({ gameId: String(w.gameId) });
const blockParams = (w: World) => ({ gameId: String(w.gameId), blockId: String(w.blockId) });
const playerParams = (w: World) => ({ playerId: w.playerId });
const webhookParams = (w: World) => ({ webhookId: w.webhookId });
const reportParams = (w: World) => ({ reportDate: w.reportDate });
const grantParams = (w: World) => ({ freeRoundsId: w.freeRoundsId });
const uniqueName = () => `Game ${process.hrtime.bigint()}`;

const p = (path: string) => `${PARTNER_BASE}${path}`;

/** A paged list of the partner's own resources: the world's own is among its items under `field`. */
const pagedList = (
  path: string,
  field: string,
  ids: (world: World) => Array<string | number>,
  idOf: (item: any) => string | number,
): PartnerRoute => ({ method: "get", path: p(path), query: PAGE, foreign: { kind: "list", field, ids, idOf } });

export const PARTNER_ROUTES: PartnerRoute[] = [
  {
    method: "post",
    path: p("/games"),
    body: (w) => ({ parSheetId: w.parSheetId, name: uniqueName(), minWagerUsd: 0.5, maxWagerUsd: 50 }),
    foreign: { kind: "parSheet" },
  },
  pagedList(
    "/games",
    "games",
    (w) => [w.gameId],
    (game) => game.gameConfigId,
  ),
  { method: "get", path: p("/games/{gameId}"), params: gameParams, foreign: { kind: "game" } },
  {
    method: "patch",
    path: p("/games/{gameId}"),
    params: gameParams,
    body: () => ({ isActive: true, maxWagerUsd: 50, largeWinThresholdUsd: 500 }),
    foreign: { kind: "game" },
  },
  {
    method: "get",
    path: p("/games/{gameId}/blocks"),
    params: gameParams,
    query: PAGE,
    foreign: { kind: "game" },
  },
  { method: "get", path: p("/games/{gameId}/blocks/{blockId}"), params: blockParams, foreign: { kind: "game" } },
  {
    method: "get",
    path: p("/games/{gameId}/blocks/{blockId}/entries"),
    params: blockParams,
    query: { page: "1", limit: "1000" },
    foreign: { kind: "game" },
    // The world's block is still being served: 409 KS-4216 until it is revealed.
    ownStatus: 409,
  },
  { method: "get", path: p("/spins/{spinId}/proof"), params: (w) => ({ spinId: w.spinId }), foreign: { kind: "spin" } },
  { method: "get", path: p("/spins/{spinId}"), params: (w) => ({ spinId: w.spinId }), foreign: { kind: "spin" } },
  {
    method: "post",
    path: p("/spins/{spinId}/void"),
    params: (w) => ({ spinId: w.spinId }),
    body: () => ({ reason: "Wallet refused the debit" }),
    foreign: { kind: "spin" },
  },
  {
    method: "post",
    path: p("/spins/{spinId}/replay-link"),
    params: (w) => ({ spinId: w.spinId }),
    body: () => ({ expiresInHours: 24 }),
    bodyOptional: true,
    foreign: { kind: "spin" },
  },
  {
    method: "post",
    path: p("/par-sheets"),
    body: () => SAMPLE_PAR_SHEET,
    foreign: { kind: "create", listPath: p("/par-sheets"), field: "parSheets" },
  },
  pagedList(
    "/par-sheets",
    "parSheets",
    (w) => [w.parSheetId],
    (sheet) => sheet.id,
  ),
  {
    method: "get",
    path: p("/par-sheets/{parSheetId}"),
    params: (w) => ({ parSheetId: w.parSheetId }),
    foreign: { kind: "parSheet" },
  },
  {
    method: "post",
    path: p("/spins"),
    body: (w) => ({ gameId: w.gameId, playerId: w.playerId, wagerUsd: 1.25 }),
    foreign: { kind: "game" },
  },
  { method: "get", path: p("/players/{playerId}"), params: playerParams, foreign: { kind: "player" } },
  { method: "get", path: p("/jurisdictions"), foreign: { kind: "namespaced", read: p("/jurisdictions") } },
  {
    method: "get",
    path: p("/players/{playerId}/protection"),
    params: playerParams,
    foreign: { kind: "namespaced", read: p("/players/{playerId}/protection") },
  },
  {
    method: "put",
    path: p("/players/{playerId}/protection"),
    params: playerParams,
    body: () => ({ lossLimitUsd: { weekly: 100 } }),
    foreign: { kind: "namespaced", read: p("/players/{playerId}/protection") },
  },
  {
    method: "get",
    path: p("/players/{playerId}/spins"),
    params: playerParams,
    query: PAGE,
    foreign: { kind: "player" },
  },
  {
    method: "post",
    path: p("/webhooks"),
    body: () => ({ url: "https://hooks.example.com/fuzz", events: ["spin.large_win", "block.low_reserve"] }),
    foreign: { kind: "create", listPath: p("/webhooks"), field: "webhooks" },
  },
  pagedList(
    "/webhooks",
    "webhooks",
    (w) => [w.webhookId],
    (webhook) => webhook.id,
  ),
  {
    method: "patch",
    path: p("/webhooks/{webhookId}"),
    params: webhookParams,
    body: () => ({ rateLimitPerSecond: 50 }),
    foreign: { kind: "webhook" },
  },
  { method: "delete", path: p("/webhooks/{webhookId}"), params: webhookParams, foreign: { kind: "webhook" } },
  { method: "post", path: p("/webhooks/{webhookId}/enable"), params: webhookParams, foreign: { kind: "webhook" } },
  {
    method: "get",
    path: p("/webhooks/{webhookId}/deliveries"),
    params: webhookParams,
    query: PAGE,
    foreign: { kind: "webhook" },
  },
  {
    method: "post",
    path: p("/webhooks/{webhookId}/deliveries/{deliveryId}/redeliver"),
    params: (w) => ({ webhookId: w.webhookId, deliveryId: w.deliveryId }),
    foreign: { kind: "webhook" },
  },
  {
    method: "post",
    path: p("/webhooks/{webhookId}/recover"),
    params: webhookParams,
    body: () => ({ since: new Date(Date.now() - 3_600_000).toISOString() }),
    foreign: { kind: "webhook" },
  },
  {
    method: "post",
    path: p("/webhooks/{webhookId}/rotate-secret"),
    params: webhookParams,
    body: () => ({ overlapSeconds: 60 }),
    bodyOptional: true,
    foreign: { kind: "webhook" },
  },
  {
    method: "get",
    path: p("/events"),
    query: { after: "0", limit: "100" },
    foreign: { kind: "list", field: "events", ids: (w) => [w.eventId], idOf: (event) => event.id },
  },
  pagedList(
    "/settlements",
    "reports",
    (w) => [w.reportDate],
    (report) => report.reportDate,
  ),
  { method: "get", path: p("/settlements/{reportDate}"), params: reportParams, foreign: { kind: "report" } },
  {
    method: "post",
    path: p("/settlements/{reportDate}/acknowledge"),
    params: reportParams,
    foreign: { kind: "report" },
  },
  {
    method: "post",
    path: p("/settlements/{reportDate}/dispute"),
    params: reportParams,
    body: () => ({ reason: "Totals differ from our ledger" }),
    foreign: { kind: "report" },
  },
  {
    method: "post",
    path: p("/free-rounds"),
    body: (w) => ({
      gameId: w.gameId,
      playerIds: [w.playerId],
      rounds: 3,
      wagerUsd: 1,
      expiresAt: new Date(Date.now() + 86_400_000).toISOString(),
    }),
    foreign: { kind: "game" },
  },
  pagedList(
    "/free-rounds",
    "freeRounds",
    (w) => [w.freeRoundsId],
    (grant) => grant.freeRoundsId,
  ),
  { method: "get", path: p("/free-rounds/{freeRoundsId}"), params: grantParams, foreign: { kind: "freeRounds" } },
  {
    method: "get",
    path: p("/free-rounds/{freeRoundsId}/players/{playerId}"),
    params: (w) => ({ freeRoundsId: w.freeRoundsId, playerId: w.playerId }),
    foreign: { kind: "freeRounds" },
  },
  {
    method: "post",
    path: p("/free-rounds/{freeRoundsId}/cancel"),
    params: grantParams,
    foreign: { kind: "freeRounds" },
  },
];

const routeKey = (route: DeclaredRoute) => `${route.method.toUpperCase()} ${route.path}`;

/** Declared partner routes without an entry in PARTNER_ROUTES (and entries naming no declared route). */
export function uncoveredRoutes(): { missing: string[]; stale: string[] } {
  const declared = declaredRoutes()
    .filter((route) => route.path.startsWith(`${PARTNER_BASE}/`))
    .map(routeKey);
  const covered = PARTNER_ROUTES.map(routeKey);
  return {
    missing: declared.filter((key) => !covered.includes(key)),
    stale: covered.filter((key) => !declared.includes(key)),
  };
}

/** Fills `{name}` placeholders with already-encoded segments. */
export function fillPath(path: string, encoded: Record<string, string>): string {
  return path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = encoded[name];
    if (value === undefined) throw new Error(`no value for {${name}} in ${path}`);
    return value;
  });
}

export function describeRoute(route: DeclaredRoute): string {
  return routeKey(route);
}
