import { connect } from "node:net";
import { SAMPLE_PAR_SHEET } from "@outcomes/core";
import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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
let api: TestApi;
let world: World;

beforeAll(async () => {
  api = await startTestApi(WORLD_ENV);
  world = await buildWorld(api, await api.createPartner(), "sandbox");
});
afterAll(async () => {
  await api?.close();
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
      for (const body of UNPARSEABLE_BODIES) {
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
        expect([answer.status, answer.body.errorCode], `${name}=${segment.slice(0, 20)}`).toEqual(NOT_FOUND[name]);
      }
    }
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
