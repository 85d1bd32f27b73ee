import { startTestApi, TEST_ADMIN_TOKEN, type TestApi } from "@outcomes/testkit/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DASHBOARD_BASE } from "../../apps/api/src/dashboard.js";
import { ADMIN_BASE } from "../../apps/api/src/router.js";
import { expectHarmless, send } from "./probe.js";
import { type DeclaredRoute, declaredRoutes, fillPath } from "./route-table.js";
import { snapshotState } from "./snapshot.js";

/**
 * The operator plane refuses everyone without the token (issue 8, item 6; CONTRACT §1, §3): every
 * operator route from the OpenAPI registry and the queue dashboard, with no token (401 KS-4001), a
 * wrong one in every form (401 KS-4002), and on a deployment without ADMIN_TOKEN (503 KS-5002,
 * whatever is presented). Nothing refused changes anything.
 */
let api: TestApi;
let unconfigured: TestApi;
let partnerKey: string;

beforeAll(async () => {
  api = await startTestApi();
  unconfigured = await startTestApi({ ADMIN_TOKEN: "" }, { shareWith: api });
  const partner = await api.createPartner();
  partnerKey = partner.apiKey;
  // A real partner: refusals must hold for a target that exists, and key ids get checked past it.
  PARAMS.partnerId = partner.partnerId;
});
afterAll(async () => {
  await unconfigured?.close();
  await api?.close();
});

const PARAMS: Record<string, string> = {
  partnerId: "ptr_0000000000000000000000",
  keyId: "key_0000000000000000000000",
  parSheetId: "par_0000000000000000000000",
  gameId: "1",
  reportDate: "2026-01-01",
  code: "ZZ-PROBE",
};

const operatorRoutes = declaredRoutes().filter((route) => route.path.startsWith(`${ADMIN_BASE}/`));
/** Served beside the registry's routes: the operator API description and the queue dashboard. */
const BESIDE_REGISTRY: DeclaredRoute[] = [
  { method: "get", path: `${ADMIN_BASE}/openapi.json` },
  { method: "get", path: DASHBOARD_BASE },
  { method: "get", path: `${DASHBOARD_BASE}/api/queues` },
  { method: "put" as DeclaredRoute["method"], path: `${DASHBOARD_BASE}/api/queues/webhooks/1/retry` },
];

/** A request that would do something if it got through: a plausible body on every write. */
function requestFor(route: DeclaredRoute, authorization?: string) {
  const headers: Record<string, string> = authorization ? { Authorization: authorization } : {};
  const writes = route.method !== "get";
  if (writes) headers["Content-Type"] = "application/json";
  return {
    method: route.method.toUpperCase(),
    url: fillPath(route.path, PARAMS),
    headers,
    ...(writes
      ? { body: JSON.stringify({ slug: "intruder", name: "Intruder", environment: "sandbox", enabled: true }) }
      : {}),
  };
}

const basic = (password: string) => `Basic ${Buffer.from(`ops:${password}`).toString("base64")}`;
const WRONG_CREDENTIALS = [
  `Bearer ${TEST_ADMIN_TOKEN.slice(0, -1)}x`,
  `Bearer ${TEST_ADMIN_TOKEN}x`,
  `Bearer ${TEST_ADMIN_TOKEN.slice(0, -1)}`,
  `Bearer ${TEST_ADMIN_TOKEN.toUpperCase()}`,
  basic(`${TEST_ADMIN_TOKEN.slice(0, -1)}x`),
  "Bearer ks_sandbox_0000",
  // The whole header is the credential (issue 38, item 6): nothing after the token is dropped.
  `Bearer ${TEST_ADMIN_TOKEN} junk`,
  `Bearer ${TEST_ADMIN_TOKEN}\tjunk`,
  `${basic(TEST_ADMIN_TOKEN)} junk`,
  `Basic ${TEST_ADMIN_TOKEN}`,
];
const MISSING_CREDENTIALS = [undefined, "", "Bearer", "Bearer ", basic(""), "Token abc", TEST_ADMIN_TOKEN];

async function expectRefused(target: TestApi, route: DeclaredRoute, authorization: string | undefined, code: string) {
  const answer = await send(target, requestFor(route, authorization));
  const context = `${route.method.toUpperCase()} ${route.path} with ${JSON.stringify(authorization)}`;
  expect([answer.status, answer.body?.errorCode], context).toEqual([code === "KS-5002" ? 503 : 401, code]);
  expect(answer.body.requestId, context).toBe(answer.headers.get("x-request-id"));
}

describe("operator API and dashboard refuse without the token", () => {
  it("finds the operator routes to check in the registry", () => {
    expect(operatorRoutes.length).toBeGreaterThanOrEqual(17);
  });

  it.each(
    [...operatorRoutes, ...BESIDE_REGISTRY].map((route) => [`${route.method.toUpperCase()} ${route.path}`, route]),
  )("%s", async (_, route) => {
    const before = await snapshotState(api);
    for (const authorization of MISSING_CREDENTIALS) await expectRefused(api, route, authorization, "KS-4001");
    for (const authorization of WRONG_CREDENTIALS) await expectRefused(api, route, authorization, "KS-4002");
    // A partner's API key opens nothing on the operator plane.
    const withKey = await send(api, { ...requestFor(route), headers: { "X-API-Key": partnerKey } });
    expect([withKey.status, withKey.body.errorCode]).toEqual([401, "KS-4001"]);
    for (const authorization of [undefined, `Bearer ${TEST_ADMIN_TOKEN}`, basic(TEST_ADMIN_TOKEN)]) {
      await expectRefused(unconfigured, route, authorization, "KS-5002");
    }
    expect(await snapshotState(api)).toEqual(before);
  });

  it("with the token, path ids that cannot be ids are refused cleanly (4xx KS-, nothing changed)", async () => {
    for (const route of operatorRoutes.filter((entry) => entry.path.includes("{"))) {
      for (const name of route.path.match(/\{(\w+)\}/g) ?? []) {
        for (const segment of ["%00", "a%00b", "x".repeat(3000)]) {
          const request = requestFor(route, `Bearer ${TEST_ADMIN_TOKEN}`);
          const url = fillPath(route.path, { ...PARAMS, [name.slice(1, -1)]: segment });
          await expectHarmless(api, { ...request, url, mutation: `${name}=${segment.slice(0, 10)}` }, "");
        }
      }
    }
  });

  it("the right token opens the same routes (the refusals are about the token alone)", async () => {
    const listed = await send(
      api,
      requestFor({ method: "get", path: `${ADMIN_BASE}/partners` }, `Bearer ${TEST_ADMIN_TOKEN}`),
    );
    expect(listed.status).toBe(200);
    const board = await send(api, requestFor(BESIDE_REGISTRY[2]!, basic(TEST_ADMIN_TOKEN)));
    expect(board.status).toBe(200);
  });
});
