import { connect } from "node:net";
import { SAMPLE_PAR_SHEET } from "@outcomes/core";
import { TEST_ADMIN_TOKEN } from "@outcomes/testkit/api";
import { testApiForFile } from "@outcomes/testkit/file-fixture";
import { beforeAll, describe, expect, it } from "vitest";
import { ADMIN_BASE, PARTNER_BASE } from "../../apps/api/src/router.js";
import { PLAYER_ID_PATTERN } from "../../apps/api/src/routes/partner/spin-json.js";
import { fromValue, type Json, Obj, Raw, toText, UNPARSEABLE_BODIES, WRONG_SHAPE_BODIES } from "./hostile.js";
import { NON_JSON_TYPES } from "./hostile-request.js";
import { expectHarmless, expectServiceError, send } from "./probe.js";
import { describeRoute, fillPath, PARTNER_ROUTES } from "./route-table.js";
import { snapshotState } from "./snapshot.js";
import { buildWorld, WORLD_ENV, type World } from "./world.js";

/**
 * The fixed hostile cases of issue 8, item 5, on every partner route that takes a body or a path
 * id: each listed value is sent, none left to chance (the fuzz in hostile-input.test.ts explores
 * around them).
 */
const api = testApiForFile(WORLD_ENV);
let world: World;

beforeAll(async () => {
  world = await buildWorld(api, await api.createPartner(), "sandbox");
});

const JSON_TYPE = { "Content-Type": "application/json" };
const MiB = 1024 * 1024;
const bodyRoutes = PARTNER_ROUTES.filter((route) => route.body);
const byName = (routes: typeof PARTNER_ROUTES) => routes.map((route) => [describeRoute(route), route] as const);
const urlOf = (route: (typeof PARTNER_ROUTES)[number]) =>
  fillPath(route.path, route.params?.(world) ?? {}).replace(/[^/]+/g, (segment) => encodeURIComponent(segment));

/** Every string value and key of a body, as slots to overwrite. */
function strings(json: Json, out: Array<(text: string) => void> = []) {
  if (json instanceof Obj) {
    json.entries.forEach((entry) => {
      out.push((text) => {
        entry[0] = text;
      });
      strings(entry[1], out);
    });
  } else if (Array.isArray(json)) for (const item of json) strings(item, out);
  else if (json.text.startsWith('"')) {
    const original = JSON.parse(json.text) as string;
    out.push((text) => {
      (json as { text: string }).text = JSON.stringify(`${original}${text}`);
    });
  }
  return out;
}

describe("bodies no route accepts", () => {
  it.each(byName(bodyRoutes))(
    "%s: not JSON, or not the route's JSON: 400 KS-4101 (KS-4102/KS-4104 by shape)",
    async (_, route) => {
      const method = route.method.toUpperCase();
      const url = urlOf(route);
      // An empty body where the body is optional is no body (tested below), not an unparseable one.
      for (const body of UNPARSEABLE_BODIES.filter((text) => text !== "" || !route.bodyOptional)) {
        const answer = await expectHarmless(api, { method, url, headers: JSON_TYPE, body }, world.apiKey);
        expect([answer.status, answer.body.errorCode], JSON.stringify(body)).toEqual([400, "KS-4101"]);
      }
      for (const body of WRONG_SHAPE_BODIES) {
        const answer = await expectHarmless(api, { method, url, headers: JSON_TYPE, body }, world.apiKey);
        expect(answer.status, body).toBe(400);
        expect(["KS-4101", "KS-4102", "KS-4104"], body).toContain(answer.body.errorCode);
      }
      const valid = JSON.stringify(route.body?.(world));
      for (const type of NON_JSON_TYPES) {
        const headers: Record<string, string> = type ? { "Content-Type": type } : {};
        const answer = await expectHarmless(api, { method, url, headers, body: valid }, world.apiKey);
        expect([answer.status, answer.body.errorCode], type).toEqual([400, "KS-4101"]);
      }
    },
  );

  it.each(byName(bodyRoutes))(
    "%s: U+0000 or an unpaired surrogate in any string or key is 400 KS-4101, never a 500",
    async (_, route) => {
      const count = strings(fromValue(route.body?.(world))).length;
      for (const bad of ["\u0000", "a\u0000", "\ud800", "\udfff"]) {
        for (let slot = 0; slot < count; slot++) {
          const body = fromValue(route.body?.(world));
          strings(body)[slot]!(bad);
          const request = {
            method: route.method.toUpperCase(),
            url: urlOf(route),
            headers: JSON_TYPE,
            body: toText(body),
          };
          const answer = await expectHarmless(api, request, world.apiKey);
          expect([answer.status, answer.body.errorCode], request.body.slice(0, 200)).toEqual([400, "KS-4101"]);
        }
      }
    },
  );

  it("a PAR sheet's unknown fields (kept in the stored document) are held to the same rules", async () => {
    const extras = [
      '"\\u0000"',
      '"\\ud83d"',
      '{"\\u0000":1}',
      `${"[".repeat(100_000)}${"]".repeat(100_000)}`,
      `${'{"a":'.repeat(5_000)}1${"}".repeat(5_000)}`,
    ];
    for (const extra of extras) {
      const body = toText(new Obj([...(fromValue(SAMPLE_PAR_SHEET) as Obj).entries, ["notes", new Raw(extra)]]));
      const request = { method: "POST", url: "/api/partner/v1/par-sheets", headers: JSON_TYPE, body };
      const answer = await expectHarmless(api, request, world.apiKey);
      if (answer.status === 201) {
        // Stored: it must read back as sent.
        const stored = await api.request(`/api/partner/v1/par-sheets/${answer.body.id}`, { apiKey: world.apiKey });
        expect(stored.status).toBe(200);
        expect(JSON.stringify(stored.body.document.notes)).toBe(JSON.stringify(JSON.parse(extra)));
      }
    }
  });
});

/** What a path id that names nothing (U+0000 in it, or far too long) answers, per parameter. */
const NOT_FOUND: Record<string, [number, string]> = {
  gameId: [403, "KS-4006"],
  blockId: [404, "KS-4215"],
  spinId: [404, "KS-4215"],
  parSheetId: [404, "KS-4205"],
  playerId: [404, "KS-4204"],
  webhookId: [404, "KS-4206"],
  deliveryId: [404, "KS-4215"],
  reportDate: [400, "KS-4105"],
  freeRoundsId: [404, "KS-4219"],
};

describe("path ids that cannot name anything", () => {
  it.each(byName(PARTNER_ROUTES.filter((route) => route.params)))("%s: answer as an unknown id", async (_, route) => {
    const params = Object.fromEntries(
      Object.entries(route.params?.(world) ?? {}).map(([name, value]) => [name, encodeURIComponent(value)]),
    );
    for (const name of Object.keys(params)) {
      expect(NOT_FOUND[name], `expected answer for {${name}}`).toBeDefined();
      for (const segment of ["%00", "a%00b", "x".repeat(3000), "%F0%9F%8E%B0", "__proto__"]) {
        const url = fillPath(route.path, { ...params, [name]: segment });
        const body = route.body ? JSON.stringify(route.body(world)) : undefined;
        const request = { method: route.method.toUpperCase(), url, headers: body ? JSON_TYPE : {}, body };
        const answer = await expectHarmless(api, request, world.apiKey);
        // A route of the caller's own namespace (a player's protection) may name a player set before any spin.
        const names = route.foreign.kind === "namespaced" && PLAYER_ID_PATTERN.test(decodeURIComponent(segment));
        expect([answer.status, answer.body.errorCode], `${name}=${segment.slice(0, 20)}`).toEqual(
          names ? [200, undefined] : NOT_FOUND[name],
        );
      }
    }
  });
});

/** One operation of the partner or operator API document. */
interface Operation {
  path: string;
  method: string;
  parameters?: Array<{ name: string; in: string; schema?: { type?: unknown } }>;
  requestBody?: { required?: boolean };
}

/** Every operation of both API documents, as served. */
async function documentedOperations(): Promise<Operation[]> {
  const partner = (await api.request(`${PARTNER_BASE}/openapi.json`)).body;
  const admin = (await api.request(`${ADMIN_BASE}/openapi.json`, { admin: true })).body;
  return [partner, admin].flatMap((document) =>
    Object.entries(document.paths as Record<string, Record<string, Operation>>).flatMap(([path, item]) =>
      // Paths are relative to the document's server URL (the API's base).
      Object.entries(item).map(([method, operation]) => ({
        ...operation,
        path: `${document.servers[0].url}${path}`,
        method,
      })),
    ),
  );
}

/** A documented path filled with the world's ids (and its partner's key id), and how to authenticate there. */
async function addressOf(path: string): Promise<{ url: string; headers: Record<string, string>; apiKey: string }> {
  const keys = await api.request(`${ADMIN_BASE}/partners/${world.partnerId}/api-keys`, { admin: true });
  const ids = { ...world, keyId: keys.body.apiKeys[0].id } as unknown as Record<string, string | number>;
  const url = path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(String(ids[name])));
  return path.startsWith(ADMIN_BASE)
    ? { url, headers: { Authorization: `Bearer ${TEST_ADMIN_TOKEN}` }, apiKey: "" }
    : { url, headers: {}, apiKey: world.apiKey };
}

describe("integer query parameters", () => {
  it("take plain digits only, on every route of both APIs: anything else is 400 KS-4101 naming the parameter", async () => {
    const checked: string[] = [];
    for (const operation of await documentedOperations()) {
      const integers = (operation.parameters ?? []).filter(
        (parameter) => parameter.in === "query" && parameter.schema?.type === "integer",
      );
      if (integers.length === 0) continue;
      const { url, headers, apiKey } = await addressOf(operation.path);
      const method = operation.method.toUpperCase();
      // Without the parameter the route answers as usual (the world's block is not revealed yet: 409).
      const usual = await send(api, { method, url, headers }, apiKey);
      expect([200, 409], `${url}: ${usual.text.slice(0, 200)}`).toContain(usual.status);
      for (const { name } of integers) {
        for (const value of ["0x10", "1e3", "1e2", "", "1.0", "+1", " 1", "1 ", "1_0", "\u0661", "Infinity"]) {
          const request = { method, url: `${url}?${name}=${encodeURIComponent(value)}`, headers };
          const answer = await send(api, request, apiKey);
          expectServiceError(answer, request.url);
          expect([answer.status, answer.body.errorCode, answer.body.details?.[0]?.path], request.url).toEqual([
            400,
            "KS-4101",
            name,
          ]);
        }
        checked.push(`${operation.path}?${name}`);
      }
    }
    expect(checked).toEqual(
      expect.arrayContaining([
        `${PARTNER_BASE}/events?after`,
        `${PARTNER_BASE}/events?limit`,
        `${PARTNER_BASE}/games?page`,
        `${PARTNER_BASE}/players/{playerId}/spins?limit`,
        `${PARTNER_BASE}/games/{gameId}/blocks/{blockId}/entries?limit`,
        `${ADMIN_BASE}/partners?page`,
      ]),
    );
  });

  it("plain digits, leading zeros included, still page", async () => {
    const answer = await api.request(`${PARTNER_BASE}/events?after=000&limit=0001`, { apiKey: world.apiKey });
    expect([answer.status, answer.body.events.length]).toEqual([200, 1]);
  });
});

describe("optional bodies", () => {
  it("every route whose JSON body is optional takes an empty body with a JSON Content-Type as none", async () => {
    const optional = (await documentedOperations()).filter((operation) => operation.requestBody?.required === false);
    expect(optional.map((operation) => operation.path)).toContain(`${PARTNER_BASE}/webhooks/{webhookId}/rotate-secret`);
    for (const operation of optional) {
      const { url, headers, apiKey } = await addressOf(operation.path);
      const method = operation.method.toUpperCase();
      const answer = await send(api, { method, url, headers: { ...headers, ...JSON_TYPE }, body: "" }, apiKey);
      expect(answer.status, `${method} ${url}: ${answer.text.slice(0, 200)}`).toBeGreaterThanOrEqual(200);
      expect(answer.status, `${method} ${url}: ${answer.text.slice(0, 200)}`).toBeLessThan(300);
    }
  });

  it("an empty or blank body rotates a webhook secret with the default overlap, as no body does", async () => {
    const url = `${PARTNER_BASE}/webhooks/${world.webhookId}/rotate-secret`;
    const started = Date.now();
    const answer = await send(api, { method: "POST", url, headers: JSON_TYPE, body: "" }, world.apiKey);
    expect(answer.status).toBe(200);
    expect(answer.body.secret).toMatch(/^whsec_/);
    const overlapMs = Date.parse(answer.body.previousSecretExpiresAt) - started;
    expect(overlapMs).toBeGreaterThan(23 * 3_600_000);
    // Whitespace alone is no body either (issue 33): the body is optional, and nothing was meant.
    const blank = await expectHarmless(api, { method: "POST", url, headers: JSON_TYPE, body: " \n" }, world.apiKey);
    expect([blank.status, blank.body.secret?.startsWith("whsec_")]).toEqual([200, true]);
    // A body that says something is still judged.
    const malformed = await expectHarmless(api, { method: "POST", url, headers: JSON_TYPE, body: " {" }, world.apiKey);
    expect([malformed.status, malformed.body.errorCode]).toEqual([400, "KS-4101"]);
  });
});

describe("forceTier", () => {
  const spinWith = (forceTier: string) =>
    expectHarmless(
      api,
      {
        method: "POST",
        url: `${PARTNER_BASE}/spins`,
        headers: JSON_TYPE,
        body: JSON.stringify({ gameId: world.gameId, playerId: world.playerId, wagerUsd: 1, forceTier }),
      },
      world.apiKey,
    );

  it("longer than 16 characters is 400 KS-4101, and the message does not quote it", async () => {
    for (const forceTier of ["T".repeat(17), `T${"9".repeat(100_000)}`, `T1${"\u202e".repeat(5_000)}`]) {
      const answer = await spinWith(forceTier);
      expect([answer.status, answer.body.errorCode]).toEqual([400, "KS-4101"]);
      expect(answer.body.details).toEqual([expect.objectContaining({ path: "forceTier" })]);
      expect(answer.text.length).toBeLessThan(400);
      expect(answer.text).not.toContain(forceTier.slice(0, 17));
    }
  });

  it("an unknown tier of up to 16 characters is named in the message", async () => {
    const answer = await spinWith("T99999999999999Z");
    expect([answer.status, answer.body.errorCode]).toEqual([400, "KS-4101"]);
    expect(answer.body.message).toBe(`forceTier "T99999999999999Z" is not a tier of the game's PAR sheet`);
  });
});

describe("body size", () => {
  it.each(byName(bodyRoutes))("%s: a body over 1 MiB is 400 KS-4101 saying it is too large", async (_, route) => {
    const body = JSON.stringify({ padding: "a".repeat(MiB) });
    const before = await snapshotState(api);
    const answer = await send(
      api,
      { method: route.method.toUpperCase(), url: urlOf(route), headers: JSON_TYPE, body },
      world.apiKey,
    );
    expectServiceError(answer, describeRoute(route));
    expect([answer.status, answer.body.errorCode]).toEqual([400, "KS-4101"]);
    expect(answer.body.message).toMatch(/too large/i);
    // The body was not read: the connection is closed so the client stops sending and sees the answer.
    expect(answer.headers.get("connection")).toBe("close");
    expect(await snapshotState(api)).toEqual(before);
  });

  it("a chunked body (no Content-Length) over 1 MiB is refused the same way", async () => {
    const encoder = new TextEncoder();
    const chunk = encoder.encode(`"${"b".repeat(64 * 1024)}",`);
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent === 0) controller.enqueue(encoder.encode('{"padding":['));
        if (sent > 2 * MiB) {
          controller.enqueue(encoder.encode('"end"]}'));
          controller.close();
          return;
        }
        controller.enqueue(chunk);
        sent += chunk.length;
      },
    });
    const before = await snapshotState(api);
    const request = { method: "POST", url: "/api/partner/v1/spins", headers: JSON_TYPE, body: stream };
    const answer = await send(api, request, world.apiKey);
    expect([answer.status, answer.body?.errorCode]).toEqual([400, "KS-4101"]);
    expect(answer.body.message).toMatch(/too large/i);
    expect(await snapshotState(api)).toEqual(before);
  });

  it("a body just under 1 MiB is read and judged on its content", async () => {
    const body = JSON.stringify({ gameId: world.gameId, playerId: "c".repeat(MiB - 200), wagerUsd: 1 });
    const request = { method: "POST", url: "/api/partner/v1/spins", headers: JSON_TYPE, body };
    const answer = await expectHarmless(api, request, world.apiKey);
    expect([answer.status, answer.body.errorCode]).toEqual([400, "KS-4101"]);
    expect(answer.body.message).not.toMatch(/too large/i);
  });
});

/** Raw bytes to the server, the answer as text (for what fetch refuses to send). */
async function rawExchange(bytes: string): Promise<string> {
  const { port } = new URL(api.baseUrl);
  const socket = connect(Number(port), "127.0.0.1");
  const chunks: Buffer[] = [];
  socket.on("data", (chunk: Buffer) => chunks.push(chunk));
  await new Promise<void>((resolve, reject) => {
    socket.on("close", () => resolve());
    socket.on("error", reject);
    socket.write(bytes);
  });
  return Buffer.concat(chunks).toString();
}

describe("requests the HTTP parser refuses", () => {
  it("a request line over 16 KiB is 400 KS-4101 with a request id, like any error", async () => {
    const answer = await send(
      api,
      { method: "GET", url: `/api/partner/v1/players/${"x".repeat(17_000)}`, headers: {} },
      world.apiKey,
    );
    expect([answer.status, answer.body.errorCode]).toEqual([400, "KS-4101"]);
    expect(answer.body.message).toMatch(/too large/);
    expect(answer.body.requestId).toBe(answer.headers.get("x-request-id"));
  });

  it.each([
    ["not HTTP", "HELLO\r\n\r\n"],
    ["a header line without a colon", "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Injected\r\n\r\n"],
    ["a bare CR inside a header value", "GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: a\rX-B: b\r\n\r\n"],
    ["a NUL in the request line", "GET /api/partner/v1/games\u0000 HTTP/1.1\r\nHost: x\r\n\r\n"],
  ])("%s: 400 KS-4101 with a JSON body", async (_, bytes) => {
    const answer = await rawExchange(bytes);
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    const body = JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4));
    expect(body.errorCode).toBe("KS-4101");
    expect(answer).toContain(`X-Request-Id: ${body.requestId}`);
  });
});
