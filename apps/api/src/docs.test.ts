import { CURRENT_RELEASE, ErrorCode } from "@outcomes/core";
import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import { browserMissing, iconStatus, openOffline } from "@outcomes/testkit/browser";
import { Validator } from "@seriousme/openapi-schema-validator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "./app.js";
import { DASHBOARD_BASE } from "./dashboard.js";
import { ADMIN_BASE, PARTNER_BASE } from "./router.js";

let api: TestApi;
let partnerDoc: any;
let adminDoc: any;
beforeAll(async () => {
  api = await startTestApi();
  partnerDoc = (await api.request(`${PARTNER_BASE}/openapi.json`)).body;
  adminDoc = (await api.request(`${ADMIN_BASE}/openapi.json`, { admin: true })).body;
});
afterAll(async () => {
  await api.close();
});

/** Routes outside the two APIs: operations and tooling, deliberately not in either document. */
const NOT_API = [
  "/healthz",
  "/readyz",
  "/docs",
  "/docs/assets/{file}",
  "/docs/errors",
  "/favicon.svg",
  "/favicon.ico",
  "/replay/assets/{file}",
];
/**
 * Replay pages sit outside /api and need no key, yet partners build on their JSON: the partner
 * document describes the page and its data, which one route serves (`{token}` or `{token}.json`).
 */
const REPLAY_ROUTE = "/replay/{token}";
const REPLAY_DOCUMENTED = [REPLAY_ROUTE, `${REPLAY_ROUTE}.json`];

async function expectValid(document: unknown) {
  const validator = new Validator();
  const result = await validator.validate(document as Record<string, unknown>);
  expect(result.errors ?? []).toEqual([]);
  expect(result.valid).toBe(true);
  expect(validator.version).toBe("3.1");
  // Every $ref resolves.
  expect(() => validator.resolveRefs()).not.toThrow();
}

type Operation = { responses: Record<string, unknown>; requestBody?: unknown; security?: unknown[] };
const METHODS = new Set(["get", "put", "post", "delete", "options", "head", "patch", "trace"]);

/** Every operation of a document (a path item's other fields, e.g. its `servers`, left out). */
function operations(document: any): Array<[string, string, Operation]> {
  return Object.entries(document.paths ?? {}).flatMap(([path, item]) =>
    Object.entries(item as Record<string, Operation>)
      .filter(([method]) => METHODS.has(method))
      .map(([method, op]) => [path, method, op] as [string, string, Operation]),
  );
}

describe("OpenAPI documents", () => {
  it("serves a valid partner document without a key", async () => {
    await expectValid(partnerDoc);
    expect(partnerDoc.openapi).toBe("3.1.0");
    expect(partnerDoc.info.title).toContain("partner API");
    // Paths are relative to the server URL, so Scalar and generated clients put the base in once.
    expect(partnerDoc.servers).toEqual([expect.objectContaining({ url: PARTNER_BASE })]);
    expect(Object.keys(partnerDoc.paths)).toContain("/spins");
    expect(partnerDoc.info.version).toBe(`1.${CURRENT_RELEASE}.0`);
    expect(partnerDoc.externalDocs).toEqual(expect.objectContaining({ url: "/docs/errors" }));
    expect(partnerDoc.components.securitySchemes.ApiKey).toEqual({ type: "apiKey", in: "header", name: "X-API-Key" });
    expect(partnerDoc.security).toEqual([{ ApiKey: [] }]);
    expect(partnerDoc.paths["/openapi.json"].get.security).toEqual([]);
    const used = new Set(operations(partnerDoc).flatMap(([, , op]) => (op as { tags?: string[] }).tags ?? []));
    expect(new Set(partnerDoc.tags.map((tag: { name: string }) => tag.name))).toEqual(used);
  });

  it("serves a valid operator document only to the operator token", async () => {
    expect((await api.request(`${ADMIN_BASE}/openapi.json`)).body.errorCode).toBe("KS-4001");
    await expectValid(adminDoc);
    expect(adminDoc.components.securitySchemes.OperatorToken).toEqual({ type: "http", scheme: "bearer" });
    expect(adminDoc.security).toEqual([{ OperatorToken: [] }]);
    expect(adminDoc.servers).toEqual([expect.objectContaining({ url: ADMIN_BASE })]);
    expect(Object.keys(adminDoc.paths).some((path) => path.startsWith("/api/"))).toBe(false);
    expect(Object.keys(partnerDoc.paths).some((path) => path.startsWith("/api/"))).toBe(false);
  });

  it("describes every route the app serves, and nothing it does not", () => {
    const app = createApp(api.deps);
    const served = new Set<string>();
    for (const route of app.routes) {
      if (route.method === "ALL") continue;
      const path = route.path.replace(/:([A-Za-z0-9_]+)/g, "{$1}");
      if (NOT_API.includes(path) || path.startsWith(DASHBOARD_BASE)) continue;
      const key = `${route.method.toLowerCase()} ${path}`;
      served.add(key);
      if (path === REPLAY_ROUTE) {
        for (const documented of REPLAY_DOCUMENTED) served.add(`get ${documented}`);
        for (const documented of REPLAY_DOCUMENTED) expect(partnerDoc.paths[documented]?.get).toBeDefined();
        continue;
      }
      const base = path.startsWith(PARTNER_BASE) ? PARTNER_BASE : path.startsWith(ADMIN_BASE) ? ADMIN_BASE : undefined;
      expect(base, `${key} is outside both APIs`).toBeDefined();
      const document = base === PARTNER_BASE ? partnerDoc : adminDoc;
      const relative = path.slice(base!.length);
      expect(document.paths[relative]?.[route.method.toLowerCase()], `${key} is not documented`).toBeDefined();
    }
    const documented = [
      ...operations(partnerDoc).map(([path, method]) =>
        REPLAY_DOCUMENTED.includes(path) ? `${method} ${path}` : `${method} ${PARTNER_BASE}${path}`,
      ),
      ...operations(adminDoc).map(([path, method]) => `${method} ${ADMIN_BASE}${path}`),
    ];
    for (const key of documented) expect(served.has(key), `${key} is documented but not served`).toBe(true);
  });

  it("names every operation with a camelCase operationId, unique in its document", () => {
    for (const document of [partnerDoc, adminDoc]) {
      const ids = operations(document).map(([path, method, op]) => {
        const id = (op as { operationId?: string }).operationId;
        expect(id, `${method} ${path} has no operationId`).toMatch(/^[a-z][A-Za-z0-9]*$/);
        return id;
      });
      expect(new Set(ids).size).toBe(ids.length);
    }
  });

  it("lists the common error answers on every operation", () => {
    for (const [path, method, op] of operations(partnerDoc)) {
      if (path.endsWith("/openapi.json")) continue;
      // Public pages: no key, no maintenance; their own 404 and 429.
      if (REPLAY_DOCUMENTED.includes(path)) {
        expect(Object.keys(op.responses).sort(), path).toEqual(["200", "404", "429"]);
        continue;
      }
      for (const status of ["401", "429", "500", "503"]) {
        expect(op.responses[status], `${method} ${path} lacks ${status}`).toBeDefined();
      }
      if (op.requestBody) expect(op.responses["400"], `${method} ${path} lacks 400`).toBeDefined();
    }
    for (const [path, method, op] of operations(adminDoc)) {
      for (const status of ["401", "503"])
        expect(op.responses[status], `${method} ${path} lacks ${status}`).toBeDefined();
      if (op.requestBody) expect(op.responses["400"], `${method} ${path} lacks 400`).toBeDefined();
    }
  });

  it("links every error answer to its code in the error reference", () => {
    for (const document of [partnerDoc, adminDoc]) {
      for (const [path, method, op] of operations(document)) {
        for (const [status, response] of Object.entries(op.responses)) {
          if (Number(status) < 400) continue;
          const { description } = response as { description: string };
          const codes = description.match(/KS-\d{4}/g) ?? [];
          expect(codes.length, `${method} ${path} ${status}`).toBeGreaterThan(0);
          for (const code of new Set(codes)) {
            expect(description, `${method} ${path} ${status}`).toContain(
              `[${code}](/docs/errors#${code.toLowerCase()})`,
            );
          }
        }
      }
    }
  });

  it("stands alone: its descriptions cite no internal document", () => {
    for (const document of [partnerDoc, adminDoc]) expect(JSON.stringify(document)).not.toMatch(/CONTRACT|SPEC\b|§/);
  });

  it("lists on free rounds, voids and spin results what the routes answer", () => {
    const freeRounds = operations(partnerDoc).filter(([path]) => path.startsWith("/free-rounds"));
    expect(freeRounds.length).toBe(5);
    // No route-level 404 KS-4215 since the rollout gate went: an unknown game is 403 KS-4006.
    for (const [path, method, op] of freeRounds)
      expect(JSON.stringify(op.responses), `${method} ${path}`).not.toContain("KS-4215");
    expect((partnerDoc.paths["/free-rounds"].post.responses["403"] as { description: string }).description).toContain(
      "KS-4006",
    );
    // A void can be refused for a player's figure past the exact range (spin-voids.test.ts).
    const voidOp = partnerDoc.paths["/spins/{spinId}/void"].post;
    expect(voidOp.responses["400"].description).toContain("KS-4103");
    expect(voidOp.description).toContain("400 KS-4103");
    expect(partnerDoc.components.schemas.SpinResult.required).toEqual(expect.arrayContaining(["voided", "freeRound"]));
  });

  it("serves the error reference at /docs/errors, one anchor per code", async () => {
    const response = await api.request("/docs/errors");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/html");
    expect(response.headers.get("content-security-policy")).toContain("default-src 'self'");
    for (const code of Object.values(ErrorCode))
      expect(response.body).toContain(`<section id="${code.toLowerCase()}">`);
    expect(response.body).toContain('id="retrying-the-rule"');
    expect(response.body).not.toMatch(/(src|href)="(https?:)?\/\//);
  });

  it("serves a favicon, so browsers get no 404 for it", async () => {
    for (const path of ["/favicon.ico", "/favicon.svg"]) {
      const icon = await fetch(`${api.baseUrl}${path}`);
      expect(icon.status).toBe(200);
      expect(icon.headers.get("content-type")).toBe("image/svg+xml");
      expect(await icon.text()).toContain("<svg");
    }
    expect((await api.request("/docs")).body).toContain('<link rel="icon" type="image/svg+xml" href="/favicon.svg" />');
  });

  it("serves the interactive reference at /docs and its viewer from the service itself", async () => {
    const response = await api.request("/docs");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/html");
    expect(response.headers.get("content-security-policy")).toContain("default-src 'self'");
    expect(response.body).toContain(`${PARTNER_BASE}/openapi.json`);
    expect(response.body).not.toMatch(/(src|href)="(https?:)?\/\//);
    const viewer = /<script src="(\/docs\/assets\/api-reference\.[0-9a-f]{16}\.js)">/.exec(response.body)?.[1];
    expect(viewer).toBeDefined();

    const asset = await fetch(`${api.baseUrl}${viewer}`, { headers: { "Accept-Encoding": "gzip" } });
    expect(asset.status).toBe(200);
    expect(asset.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(asset.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(asset.headers.get("content-encoding")).toBe("gzip");
    expect(await asset.text()).toContain("createApiReference");
    const stale = await api.request("/docs/assets/api-reference.0000000000000000.js");
    expect([stale.status, stale.body.errorCode]).toEqual([404, "KS-4215"]);
  });
});

describe("the reference at /docs in a browser without internet", () => {
  it("renders the partner API and tries a request with nothing but the service", async ({ skip }) => {
    skip(browserMissing !== undefined, browserMissing);
    const { page, external, errors, close } = await openOffline(api.baseUrl);
    try {
      await page.goto(`${api.baseUrl}/docs`, { waitUntil: "networkidle" });
      await page.getByRole("heading", { name: "Partner Game Outcome Service: partner API" }).waitFor();
      await page.getByRole("navigation").getByText("Spins", { exact: true }).click();
      await page.getByRole("heading", { name: "Run a spin" }).waitFor();
      expect(external).toEqual([]);
      // Nothing refused either (a Content-Security-Policy violation is a console error).
      expect(errors).toEqual([]);
      expect(await iconStatus(page)).toBe(200);
      // The built-in client calls the service directly, not through a proxy elsewhere.
      await page.getByRole("button", { name: "Test Request" }).first().click();
      const sent = page.waitForRequest((request) => request.url().startsWith(`${api.baseUrl}${PARTNER_BASE}/`));
      await page.getByRole("button", { name: "Send Request" }).click();
      await page.getByText('"KS-4001"').waitFor();
      // The body it sends is the document's example, one the service accepts (openapi-clients.test.ts).
      const request = await sent;
      const path = new URL(request.url()).pathname.slice(PARTNER_BASE.length);
      const operation = partnerDoc.paths[path][request.method().toLowerCase()];
      expect(operation.requestBody.content["application/json"].example).toBeDefined();
      expect(request.postDataJSON()).toEqual(operation.requestBody.content["application/json"].example);
      expect(external).toEqual([]);
    } finally {
      await close();
    }
  });

  it("shows the error reference, its icon and an entry by its link, with nothing but the service", async ({ skip }) => {
    skip(browserMissing !== undefined, browserMissing);
    const { page, external, errors, close } = await openOffline(api.baseUrl);
    try {
      await page.goto(`${api.baseUrl}/docs/errors#ks-4203`, { waitUntil: "networkidle" });
      await page.getByRole("heading", { name: /KS-4203 · 503/ }).waitFor();
      await page.getByRole("heading", { name: "Retrying: the rule" }).waitFor();
      expect(await iconStatus(page)).toBe(200);
      expect(external).toEqual([]);
      expect(errors).toEqual([]);
    } finally {
      await close();
    }
  });
});
