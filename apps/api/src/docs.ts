import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { OpenAPIHono } from "@hono/zod-openapi";
import { compress } from "hono/compress";
import type { AppEnv } from "./context.js";
import { registerErrorReference } from "./error-reference.js";
import { FAVICON_LINK, registerFavicon } from "./favicon.js";
import { withoutKey } from "./middleware/partner-auth.js";
import { adminDocument, partnerDocument } from "./openapi-documents.js";
import { ADMIN_BASE, PARTNER_BASE } from "./router.js";

const DOCS_ASSETS = "/docs/assets";

/** The name scripts/build.mjs gives the viewer's bundle beside the compiled API. */
const VIEWER_FILE = "scalar-api-reference.js";

let viewer: { url: string; body: Uint8Array<ArrayBuffer> } | undefined;

/**
 * The reference viewer's browser bundle (Scalar), served by the service itself so /docs works where
 * browsers have no internet. Read once, on first use. The compiled API finds it beside itself (the
 * image installs no dev dependencies); under tsx it comes from node_modules. The URL carries a hash
 * of the content, so browsers may keep it for good.
 */
function loadViewer() {
  if (viewer) return viewer;
  const beside = fileURLToPath(new URL(VIEWER_FILE, import.meta.url));
  const file = existsSync(beside)
    ? beside
    : join(dirname(createRequire(import.meta.url).resolve("@scalar/api-reference")), "browser", "standalone.js");
  const body = new Uint8Array(readFileSync(file));
  const hash = createHash("sha256").update(body).digest("hex").slice(0, 16);
  viewer = { url: `${DOCS_ASSETS}/api-reference.${hash}.js`, body };
  return viewer;
}

// Nothing from or to Scalar's services (fonts, AI agent, MCP, hosted client, sharing tools): the page
// must work on an air-gapped network, and the API description stays in the deployment.
const VIEWER_CONFIG = {
  url: `${PARTNER_BASE}/openapi.json`,
  withDefaultFonts: false,
  agent: { disabled: true },
  mcp: { disabled: true },
  hideClientButton: true,
  showDeveloperTools: "never",
  telemetry: false,
};
const INIT_SCRIPT = `Scalar.createApiReference("#app", ${JSON.stringify(VIEWER_CONFIG)});`;

/** Everything from the service itself; Scalar sets inline styles at run time. */
const DOCS_CSP = [
  "default-src 'self'",
  `script-src 'self' 'sha256-${createHash("sha256").update(INIT_SCRIPT).digest("base64")}'`,
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join("; ");

function docsPage(viewerUrl: string) {
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Partner Game Outcome Service: API reference</title>
    ${FAVICON_LINK}
  </head>
  <body>
    <div id="app"></div>
    <script src="${viewerUrl}"></script>
    <script>${INIT_SCRIPT}</script>
  </body>
</html>
`;
}

/**
 * `GET /api/partner/v1/openapi.json` (public: `withoutKey`), `GET /api/admin/v1/openapi.json`
 * (operator token, checked by app.ts for all of /api/admin/v1), the interactive reference at `/docs`
 * and its viewer under `/docs/assets/`, the error reference at `/docs/errors`, and the favicon.
 */
export function registerDocs(app: OpenAPIHono<AppEnv>) {
  // Whatever the method: any but GET is then 404, as for any other path without a route.
  app.all(`${PARTNER_BASE}/openapi.json`, withoutKey);
  app.get(`${PARTNER_BASE}/openapi.json`, (c) => c.json(partnerDocument()));
  app.get(`${ADMIN_BASE}/openapi.json`, (c) => c.json(adminDocument()));
  registerFavicon(app);
  registerErrorReference(app);
  app.get("/docs", (c) => {
    // Revalidated on every visit, so a new release's viewer URL is seen at once.
    c.header("Cache-Control", "no-cache");
    c.header("Content-Security-Policy", DOCS_CSP);
    return c.html(docsPage(loadViewer().url));
  });
  app.use(`${DOCS_ASSETS}/*`, compress());
  app.get(`${DOCS_ASSETS}/:file`, (c) => {
    const { url, body } = loadViewer();
    if (c.req.path !== url) return c.notFound();
    return c.body(body, 200, {
      "Content-Type": "text/javascript; charset=utf-8",
      "Cache-Control": "public, max-age=31536000, immutable",
    });
  });
}
