import { serveStatic } from "@hono/node-server/serve-static";
import type { OpenAPIHono } from "@hono/zod-openapi";
import { ErrorCode, ServiceError } from "@outcomes/core";
import { Hono, type MiddlewareHandler } from "hono";
import type { AppDeps, AppEnv } from "./context.js";
import { adminAuth } from "./middleware/admin-auth.js";
import { gated } from "./middleware/gated.js";

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

const JSON_TYPE = /^application\/json\s*(;|$)/i;

/** `Origin` names the host the request was sent to (the browser's `Host`); `null` and junk do not. */
function sameHost(origin: string, host: string | undefined): boolean {
  try {
    return host !== undefined && new URL(origin).host === host.toLowerCase();
  } catch {
    return false;
  }
}

/**
 * Cross-site request forgery: browsers re-send the dashboard's basic auth with any page's form or
 * fetch, and Bull Board reads any body as JSON and checks no origin. So every request that is not
 * GET or HEAD must come from the dashboard's own origin: `Sec-Fetch-Site`, when sent, must say
 * `same-origin`, and `Origin`, when sent, must name the request's `Host` (403 KS-4007). A request
 * with neither is not a browser's (every current browser sends `Origin` on such requests): curl
 * and scripts with `Authorization: Bearer` pass. A body must be `application/json` (400 KS-4101),
 * which a page can only send cross-site after a CORS preflight the dashboard never grants; the
 * board's own buttons (retry, clean, promote, pause) send bodyless PUTs with no type, which pass.
 */
const sameOriginWrites: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (c.req.method === "GET" || c.req.method === "HEAD") return next();
  const site = c.req.header("Sec-Fetch-Site");
  const origin = c.req.header("Origin");
  if (
    (site !== undefined && site !== "same-origin") ||
    (origin !== undefined && !sameHost(origin, c.req.header("Host")))
  ) {
    throw new ServiceError(ErrorCode.CrossSiteRequest);
  }
  const type = c.req.header("Content-Type");
  const hasBody = Number(c.req.header("Content-Length") ?? 0) > 0 || c.req.header("Transfer-Encoding") !== undefined;
  if (type === undefined ? hasBody : !JSON_TYPE.test(type)) {
    throw new ServiceError(ErrorCode.InvalidRequest, {
      message: "Dashboard requests with a body must be application/json",
    });
  }
  await next();
};

/**
 * The dashboard's guards, before any body is read (app.ts): the operator token (browsers get a
 * basic-auth prompt: the token is the password, any user name; scripts may send
 * `Authorization: Bearer`), then same-origin writes only.
 */
export function guardDashboard(app: OpenAPIHono<AppEnv>) {
  // `/admin/queues/*` covers `/admin/queues` itself too.
  app.use(`${DASHBOARD_BASE}/*`, adminAuth({ basicChallenge: true }), sameOriginWrites);
  for (const path of QUEUE_STATE_ACTIONS) app.use(`${DASHBOARD_BASE}/api/queues/${path}`, queueStateActionsGated);
}

/** The board's actions that move a whole queue's jobs between lists (Bull Board's routes). */
const QUEUE_STATE_ACTIONS = [
  "pause",
  "resume",
  ":queueName/pause",
  ":queueName/resume",
  ":queueName/empty",
  ":queueName/obliterate",
];

/**
 * BullMQ 5 (release 2) and 6 (this release) keep a paused queue's jobs in different lists, and 5's
 * resume renames its list over the other's: while both releases' processes share the queues, no
 * dashboard moves a whole queue (the `queue-pause` gate, RELEASE_GATES).
 */
const queueStateActionsGated = gated(
  "queue-pause",
  "Pausing, resuming, emptying or obliterating a queue is off until the release's rollout has finished (release finish)",
);

/**
 * Bull Board over every queue of the catalog (behind `guardDashboard`). Its code is loaded on the
 * first request for it: most API processes never serve the board, and loading it at start took 6.6
 * MB of each one's peak RSS (docs/performance.md, "API memory"). A path the board does not know is
 * the service's 404.
 */
export function registerDashboard(app: OpenAPIHono<AppEnv>, deps: AppDeps) {
  let board: Promise<Hono> | undefined;
  app.use(`${DASHBOARD_BASE}/*`, selfContained);
  app.all(`${DASHBOARD_BASE}/*`, async (c) => {
    board ??= loadBoard(deps).catch((error) => {
      board = undefined;
      throw error;
    });
    const { method, url, headers } = c.req.raw;
    // The body may have been read already (middleware/body.ts caches it): hand the board its text.
    const body = method === "GET" || method === "HEAD" ? undefined : await c.req.text();
    return (await board).fetch(new Request(url, { method, headers, body }), c.env);
  });
}

async function loadBoard(deps: AppDeps): Promise<Hono> {
  const [{ createBullBoard }, { BullMQAdapter }, { HonoAdapter }] = await Promise.all([
    import("@bull-board/api"),
    import("@bull-board/api/bullMQAdapter"),
    import("@bull-board/hono"),
  ]);
  const serverAdapter = new HonoAdapter(serveStatic).setBasePath(DASHBOARD_BASE);
  createBullBoard({
    queues: Object.values(deps.producers.queues).map((queue) => new BullMQAdapter(queue)),
    serverAdapter,
    options: { uiConfig: { boardTitle: "Outcome service queues" } },
  });
  const board = new Hono().route(DASHBOARD_BASE, serverAdapter.registerPlugin());
  board.notFound(() => {
    throw new ServiceError(ErrorCode.NotFound);
  });
  board.onError((error) => {
    throw error;
  });
  return board;
}
