import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { ErrorCode, ServiceError } from "@outcomes/core";
import { findReplaySpin, type ReplaySpin } from "@outcomes/db";
import { presentReplay, ReplaySchema } from "@outcomes/records";
import { metrics } from "@outcomes/runtime";
import type { Context } from "hono";
import type { AppEnv } from "../context.js";
import { gated } from "../middleware/gated.js";
import { errorResponses } from "../openapi.js";
import { drawPerMinute } from "./address-limit.js";
import { REPLAY_ASSETS, replayAsset, replayAssets } from "./replay-assets.js";
import { notFoundPage, replayPage, tooManyRequestsPage } from "./replay-page.js";

// Replay pages (CONTRACT §17): `GET /replay/{token}` (HTML) and `GET /replay/{token}.json`, outside
// /api and without a key: the signed token is the permission. Off until `release finish` (gate
// "replay-pages"): release 2 has no such routes.

/** Everything from the service itself; the page's data sits in a non-executable JSON script element. */
const PAGE_CSP = "default-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'";

const PAGE_HEADERS = {
  "Content-Security-Policy": PAGE_CSP,
  // The token is the permission: no shared cache keeps the page, and no link out carries the URL.
  "Cache-Control": "private, no-store",
  "Referrer-Policy": "no-referrer",
  "X-Content-Type-Options": "nosniff",
  "X-Robots-Tag": "noindex",
};

/** The answer to every token that opens nothing (expired, altered, unknown): nothing tells which. */
const NOT_FOUND_MESSAGE = "Replay link not found (it may have expired)";

export function registerReplayRoutes(app: OpenAPIHono<AppEnv>) {
  app.use("/replay/*", gated("replay-pages"));
  app.get(`${REPLAY_ASSETS}/:file`, (c) => {
    const asset = replayAsset(c.req.path);
    if (!asset) throw new ServiceError(ErrorCode.NotFound);
    return c.body(asset.body, 200, {
      "Content-Type": asset.type,
      "Cache-Control": "public, max-age=31536000, immutable",
      "X-Content-Type-Options": "nosniff",
    });
  });
  // One route for both: a path parameter cannot end in `.json` in Hono's router.
  app.get("/replay/:token", async (c) => {
    const name = c.req.param("token");
    const json = name.endsWith(".json");
    const token = json ? name.slice(0, -".json".length) : name;
    // Counted before the token is opened, so trying tokens costs as much as opening pages.
    const retryAfter = await overLimit(c);
    if (retryAfter !== null) {
      metrics.rateLimitRejections.inc({ bucket: "replay" });
      const refusal = new ServiceError(ErrorCode.RateLimited, {
        message: "Too many replay requests from this address",
        retryAfterSeconds: retryAfter,
      });
      if (json) throw refusal;
      c.header("Retry-After", String(retryAfter));
      return c.html(tooManyRequestsPage(replayAssets().urls, retryAfter), 429, PAGE_HEADERS);
    }
    const found = await openLink(c, token);
    if (!found) {
      if (json) throw new ServiceError(ErrorCode.NotFound, { message: NOT_FOUND_MESSAGE });
      return c.html(notFoundPage(replayAssets().urls), 404, PAGE_HEADERS);
    }
    const replay = presentReplay(found.spin, found.expiresAt);
    if (json) {
      // For partners' own pages, fetched from their players' browsers: the token is the permission.
      return c.json(replay, 200, { "Cache-Control": "private, no-store", "Access-Control-Allow-Origin": "*" });
    }
    return c.html(replayPage(replay, replayAssets().urls, `${token}.json`), 200, PAGE_HEADERS);
  });
}

/** Seconds to wait when the client's address is over REPLAY_RATE_LIMIT_PER_MINUTE, else null. */
async function overLimit(c: Context<AppEnv>): Promise<number | null> {
  const { deps } = c.var;
  try {
    const key = deps.keys.replayRequests(deps.clientAddress(c));
    const draw = await drawPerMinute(deps.redis, key, deps.env.REPLAY_RATE_LIMIT_PER_MINUTE);
    return draw.allowed ? null : Math.max(1, Math.ceil(draw.retryAfterMs / 1000));
  } catch (error) {
    // Redis unreachable: the page is still served (it needs only Postgres), as unknown-key look-ups are.
    deps.logger.warn({ err: error }, "replay rate limit unavailable");
    return null;
  }
}

/**
 * The spin a token names and the link's expiry, or null. Read from the replica when there is one;
 * a spin made a moment ago may not be there yet, so a miss is read again from the primary (an
 * unknown token never gets this far: it fails its signature first).
 */
async function openLink(c: Context<AppEnv>, token: string): Promise<{ spin: ReplaySpin; expiresAt: Date } | null> {
  const { deps } = c.var;
  const link = await deps.replayLinks.open(token);
  if (!link) return null;
  let spin = await findReplaySpin(deps.readDb, link.spinId);
  if (!spin && deps.readDb !== deps.db) spin = await findReplaySpin(deps.db, link.spinId);
  return spin && { spin, expiresAt: link.expiresAt };
}

const TokenParams = z.object({
  token: z.string().openapi({ param: { name: "token", in: "path" }, description: "The token of a replay link" }),
});

/**
 * The replay routes as the partner document describes them (served by `registerReplayRoutes`, whose
 * one route answers both).
 */
export function describeReplayRoutes(router: OpenAPIHono<AppEnv>) {
  const errors = errorResponses(ErrorCode.NotFound, ErrorCode.RateLimited);
  const about =
    "No API key: the link's token is the permission. An expired, altered or unknown token answers 404 alike. " +
    "At most `REPLAY_RATE_LIMIT_PER_MINUTE` (default 60) requests a minute per client address, else 429 " +
    "KS-4292 with `Retry-After`. Available once `release finish` has run for release 3.";
  const unserved = () => {
    throw new Error("described only: registerReplayRoutes serves it");
  };
  router.openapi(
    createRoute({
      method: "get",
      path: "/replay/{token}.json",
      operationId: "getReplay",
      tags: ["Replay pages"],
      summary: "A replay link's data: the spin as played, its proof and block",
      description: `The facts of the replay page, for your own pages (CORS open to any origin). ${about}`,
      security: [],
      request: { params: TokenParams },
      responses: {
        200: { description: "The spin", content: { "application/json": { schema: ReplaySchema } } },
        ...errors,
      },
    }),
    unserved,
  );
  router.openapi(
    createRoute({
      method: "get",
      path: "/replay/{token}",
      operationId: "getReplayPage",
      tags: ["Replay pages"],
      summary: "A replay page: the spin as played, its proof checked in the browser",
      description: `An HTML page for people (a phone is enough; docs/fairness.md). ${about}`,
      security: [],
      request: { params: TokenParams },
      responses: {
        200: { description: "The page", content: { "text/html": { schema: z.string() } } },
        404: {
          description: `The same page for every link that opens nothing. ${(errors[404] as { description: string }).description}`,
          content: { "text/html": { schema: z.string() } },
        },
        429: errors[429] as never,
      },
    }),
    unserved,
  );
}
