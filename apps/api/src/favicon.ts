import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "./context.js";

/** Three reels on a dark tile: small enough to serve from memory, drawn by every browser. */
const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#1f2a44"/><rect x="4" y="9" width="7" height="14" rx="2" fill="#f5c542"/><rect x="12.5" y="9" width="7" height="14" rx="2" fill="#f5c542"/><rect x="21" y="9" width="7" height="14" rx="2" fill="#f5c542"/></svg>`;

export const FAVICON_PATH = "/favicon.svg";

/** For the service's own pages (/docs, /docs/errors); browsers ask /favicon.ico of pages without one. */
export const FAVICON_LINK = `<link rel="icon" type="image/svg+xml" href="${FAVICON_PATH}" />`;

/**
 * The icon at /favicon.svg and at /favicon.ico, where browsers look when a page names none (the
 * queue dashboard's page, JSON answers opened in a tab): without it their only console error is a 404.
 */
export function registerFavicon(app: OpenAPIHono<AppEnv>) {
  for (const path of [FAVICON_PATH, "/favicon.ico"]) {
    app.get(path, (c) =>
      c.body(FAVICON_SVG, 200, { "Content-Type": "image/svg+xml", "Cache-Control": "public, max-age=86400" }),
    );
  }
}
