import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { CURRENT_RELEASE, ErrorCode } from "@outcomes/core";
import type { AppEnv } from "./context.js";
import { ERROR_REFERENCE_PATH } from "./error-reference.js";
import { ADMIN_COMMON_ERRORS, errorResponses } from "./openapi.js";
import { describeReplayRoutes } from "./replay/replay-routes.js";
import { ADMIN_BASE, createRouter, PARTNER_BASE } from "./router.js";
import { registerAdminRoutes } from "./routes/admin/index.js";
import { registerPartnerRoutes } from "./routes/partner/index.js";

/**
 * The two OpenAPI documents the service serves (docs.ts serves them): the partner API's and the
 * operator API's, each built from a router of its own. The partner document is also what the SDK's
 * wire types are generated from (\`npm run sdk:types\`, packages/sdk/src/openapi.ts).
 */

type OpenAPIDocument = ReturnType<OpenAPIHono<AppEnv>["getOpenAPI31Document"]>;
/** Each tag's name and description, in the order the document lists them. */
type Tags = Record<string, string>;

const PARTNER_DESCRIPTION = `
Run spins, manage games, PAR sheets and webhooks, and reconcile daily settlements. Call it from your
server only: the API key must never reach a player's device.

**Environments.** One base address serves sandbox and production; the key selects one
(\`ks_sandbox_…\` or \`kp_prod_…\`). Resources of the other environment behave as if they did not exist.

**Errors and retries.** Every error is \`{message, errorCode, requestId, details?}\` with the status of its
\`KS-\` code; \`requestId\` is also in the \`X-Request-Id\` header. Each error answer below links its code in
the [error reference](${ERROR_REFERENCE_PATH}): what it means, whether a spin's wager was deducted, and whether
and how to retry, by [one rule](${ERROR_REFERENCE_PATH}#retrying-the-rule).

**Spins and idempotency.** Send an \`Idempotency-Key\` header with a spin or a free-round grant: the same key
with the same body returns the first result for 24 hours; with another body it is 400 KS-4101.

**Money.** Amounts are USD as JSON numbers with at most 6 decimals, exact (integer micro-USD inside).
A settlement report also gives every amount as an exact decimal string (\`exact\`), for days past about
9 billion USD, where a JSON number is no longer exact (\`figuresExact: false\`).

**Lists.** \`page\` from 1 (default 1) and \`limit\` 1..100 (default 20); responses carry \`page\`,
\`limit\` and \`total\`.

**Rate limits.** Spins and other requests draw from separate per-second buckets per partner and
environment, reported in \`X-RateLimit-Limit\`, \`X-RateLimit-Remaining\`, \`X-RateLimit-Reset\` and the IETF
\`RateLimit-Policy\` / \`RateLimit\` fields.

**Webhooks.** Deliveries carry \`X-Service-Signature: sha256=<hex HMAC-SHA256 of the raw body>\` keyed with the
webhook secret, plus Standard Webhooks headers (\`webhook-id\`: the event id on every attempt and redelivery,
\`webhook-timestamp\`, \`webhook-signature\`).
`.trim();

const ADMIN_DESCRIPTION = `
The operator plane: partners, API keys, PAR-sheet approval, settlements, maintenance, reserve and
scheduled jobs. Authenticate with \`Authorization: Bearer $ADMIN_TOKEN\`; when the deployment has no
\`ADMIN_TOKEN\` every operator route answers 503 KS-5002. The same token opens the queue dashboard at
\`/admin/queues\`.
`.trim();

const PARTNER_TAGS: Tags = {
  Games: "Games registered from active PAR sheets",
  "PAR sheets": "Upload and read PAR sheets (probability and accounting reports)",
  Spins: "Run a spin: outcome, presentation and the player's balance",
  Players: "Players are created on their first spin",
  "Free rounds": "Grant players spins you pay for (a promotion), follow their rounds, cancel (docs/free-rounds.md)",
  "Provable fairness":
    "Blocks' commitments (Merkle root and seed hash, published before any entry is served), each spin's " +
    "inclusion proof, and each block's seed and entries once it is exhausted (docs/fairness.md)",
  "Replay pages":
    "A spin as played, on a page anyone with its link can open, with its proof checked in the browser; its data " +
    "as JSON for your own pages (docs/fairness.md)",
  Webhooks: "Signed event notifications and their deliveries; endpoint health: disable, enable, pacing",
  Events: "The event log webhooks deliver from, read in sequence order",
  Settlements:
    "Daily settlement reports: provisional until the first run after their UTC day ends, then acknowledge or dispute",
  "API description": "This document",
};

const ADMIN_TAGS: Tags = {
  "Operator: partners": "Partner accounts: create, list, deactivate, activate",
  "Operator: API keys": "Issue, list, revoke and rotate partner keys",
  "Operator: PAR sheets": "Approve or retire PAR sheets",
  "Operator: games": "Outcome reserve of a game",
  "Operator: settlements": "Generate reports and resolve disputes",
  "Operator: maintenance": "Maintenance mode for the partner API",
  "Operator: jobs": "Run scheduled jobs now",
  "Operator: release": "This release, and the end of its rolling upgrade",
  "Operator: webhooks": "Partners' webhook endpoints the service disabled",
  "API description": "This document",
};

/** Declared tags first, then any tag a route uses that is not declared yet, so the document stays consistent. */
function withTags(document: OpenAPIDocument, tags: Tags): OpenAPIDocument {
  const declared = Object.entries(tags).map(([name, description]) => ({ name, description }));
  const used = new Set<string>();
  for (const item of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(item ?? {})) {
      for (const tag of (operation as { tags?: string[] }).tags ?? []) used.add(tag);
    }
  }
  const names = new Set(declared.map((tag) => tag.name));
  const extra = [...used].filter((name) => !names.has(name)).map((name) => ({ name }));
  return { ...document, tags: [...declared.filter((tag) => used.has(tag.name)), ...extra] };
}

const DocumentBody = z.record(z.string(), z.unknown()).openapi("OpenAPIDocument");

function documentRoute(security: Array<Record<string, string[]>>, errors: ReturnType<typeof errorResponses>) {
  return createRoute({
    method: "get",
    path: "/openapi.json",
    operationId: "getOpenApiDocument",
    tags: ["API description"],
    summary: "This OpenAPI 3.1 document",
    security,
    responses: {
      200: { description: "The OpenAPI 3.1 document", content: { "application/json": { schema: DocumentBody } } },
      ...errors,
    },
  });
}

/**
 * `v1` is the path's promise (fields only added); the minor is the release that served this document
 * (docs/versioning.md), so a client generated from it can tell which release it describes.
 */
export const API_VERSION = `1.${CURRENT_RELEASE}.0`;

/**
 * Paths relative to the server URL (the API's base), so generated clients and the reference's
 * "Test Request" put the base once, in front of every path.
 */
function relativeTo(base: string, document: OpenAPIDocument): OpenAPIDocument {
  const paths = Object.fromEntries(
    Object.entries(document.paths ?? {}).map(([path, item]) =>
      path.startsWith(`${base}/`) || path === base
        ? [path.slice(base.length) || "/", item]
        : // A page outside the API's base (the replay pages) names the site root as its server.
          [path, { ...item, servers: [{ url: "/", description: "This deployment's site root" }] }],
    ),
  );
  return { ...document, paths };
}

/** Builds a document from a router of its own, so each document holds only its own routes and schemas. */
function describe(
  base: string,
  register: (app: OpenAPIHono<AppEnv>) => void,
  options: {
    title: string;
    description: string;
    tags: Tags;
    scheme: { name: string; value: Record<string, string> };
    route: ReturnType<typeof documentRoute>;
  },
) {
  const spec = createRouter();
  register(spec);
  spec.openAPIRegistry.registerComponent("securitySchemes", options.scheme.name, options.scheme.value as never);
  spec.route(
    base,
    createRouter().openapi(options.route, (c) => c.json({}, 200)),
  );
  let document: OpenAPIDocument | undefined;
  return () => {
    // Generated once, on first request: every route is registered by then.
    document ??= withTags(
      relativeTo(
        base,
        spec.getOpenAPI31Document({
          openapi: "3.1.0",
          info: { title: options.title, version: API_VERSION, description: options.description },
          servers: [{ url: base, description: "This deployment (the key or token selects the environment)" }],
          security: [{ [options.scheme.name]: [] }],
          externalDocs: {
            description: "Error reference: every KS code, whether a spin's wager was deducted, and when to retry",
            url: ERROR_REFERENCE_PATH,
          },
        }),
      ),
      options.tags,
    );
    return document;
  };
}

/** The partner API's document (\`GET /api/partner/v1/openapi.json\`), built on first use. */
export const partnerDocument = describe(
  PARTNER_BASE,
  (app) => {
    registerPartnerRoutes(app);
    describeReplayRoutes(app);
  },
  {
    title: "Partner Game Outcome Service: partner API",
    description: PARTNER_DESCRIPTION,
    tags: PARTNER_TAGS,
    scheme: { name: "ApiKey", value: { type: "apiKey", in: "header", name: "X-API-Key" } },
    route: documentRoute([], errorResponses(ErrorCode.Internal)),
  },
);

/** The operator API's document (\`GET /api/admin/v1/openapi.json\`), built on first use. */
export const adminDocument = describe(ADMIN_BASE, registerAdminRoutes, {
  title: "Partner Game Outcome Service: operator API",
  description: ADMIN_DESCRIPTION,
  tags: ADMIN_TAGS,
  scheme: { name: "OperatorToken", value: { type: "http", scheme: "bearer" } },
  route: documentRoute([{ OperatorToken: [] }], errorResponses(...ADMIN_COMMON_ERRORS)),
});
