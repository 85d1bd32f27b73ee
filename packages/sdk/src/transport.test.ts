import { describe, expect, it } from "vitest";
import { PartnerClient } from "./client.js";
import { PartnerApiError, PartnerNetworkError } from "./errors.js";
import { SAMPLE_PAR_SHEET } from "./sample-par-sheet.js";
import { backoffDelay, retryAfterMs } from "./transport.js";

type Answer = { status: number; body?: unknown; headers?: Record<string, string> } | Error;

/** A scripted fetch: answers in order, recording every request it was given. */
function scripted(...answers: Answer[]) {
  const calls: Array<{ url: string; init: RequestInit }> = [];
  const fetch = async (url: string, init: RequestInit) => {
    calls.push({ url, init });
    const answer = answers[Math.min(calls.length - 1, answers.length - 1)];
    if (!answer) throw new Error("no answer scripted");
    if (answer instanceof Error) throw answer;
    return new Response(answer.body === undefined ? null : JSON.stringify(answer.body), {
      status: answer.status,
      headers: { "Content-Type": "application/json", ...answer.headers },
    });
  };
  return { fetch, calls };
}

function client(answers: Answer[], options: { autoIdempotencyKeys?: boolean } = {}) {
  const { fetch, calls } = scripted(...answers);
  const waits: number[] = [];
  const sdk = new PartnerClient({
    apiKey: "ks_sandbox_test",
    baseUrl: "https://outcomes.example.com/base",
    fetch,
    sleep: async (ms) => {
      waits.push(ms);
    },
    ...options,
  });
  const header = (index: number, name: string) => new Headers(calls[index]?.init.headers).get(name);
  return { sdk, calls, waits, header };
}

const error = (status: number, errorCode: string, headers?: Record<string, string>): Answer => ({
  status,
  body: { message: "refused", errorCode, requestId: "req_1" },
  headers,
});
const ok = (body: unknown = { games: [], page: 1, limit: 20, total: 0 }): Answer => ({ status: 200, body });
const spin = { gameId: 1, playerId: "p-1", wagerUsd: 1 };

describe("PartnerClient requests", () => {
  it("sends the key, builds paths under the base address and encodes segments", async () => {
    const { sdk, calls, header } = client([ok(), ok({})]);
    await sdk.games.list({ page: 2, limit: 5 });
    await sdk.players.get("a/b c");
    expect(calls[0]?.url).toBe("https://outcomes.example.com/base/api/partner/v1/games?page=2&limit=5");
    expect(calls[1]?.url).toBe("https://outcomes.example.com/base/api/partner/v1/players/a%2Fb%20c");
    expect(header(0, "x-api-key")).toBe("ks_sandbox_test");
  });

  it("raises typed errors with code, status, request id and details, without retrying other 4xx", async () => {
    const { sdk, calls } = client([
      {
        status: 400,
        body: { message: "bad", errorCode: "KS-4101", requestId: "req_9", details: [{ path: "x", message: "y" }] },
      },
    ]);
    const failure = await sdk.games.get(1).catch((caught) => caught);
    expect(failure).toBeInstanceOf(PartnerApiError);
    expect(failure).toMatchObject({ status: 400, errorCode: "KS-4101", requestId: "req_9", retryable: false });
    expect(failure.details).toEqual([{ path: "x", message: "y" }]);
    // The service's message alone (the code is its own field), the code still named in the stack.
    expect(failure.message).toBe("bad");
    expect(String(failure.stack).split("\n")[0]).toBe("PartnerApiError [KS-4101]: bad");
    expect(calls).toHaveLength(1);
  });
});

describe("retry classification", () => {
  it("waits Retry-After on 429, for every kind of request", async () => {
    const { sdk, calls, waits } = client([error(429, "KS-4291", { "Retry-After": "2" }), ok({ spinId: "s" })]);
    await expect(sdk.spin(spin)).resolves.toEqual({ spinId: "s" });
    expect(waits).toEqual([2000]);
    expect(calls).toHaveLength(2);
  });

  it("backs off exponentially with jitter on 5xx for reads, then gives up after maxRetries", async () => {
    const { sdk, calls, waits } = client([error(503, "KS-5001")]);
    const failure = await sdk.games.list().catch((caught) => caught);
    // KS-5001 may have taken effect: a read is repeated, but the error does not say "nothing was done".
    expect(failure).toMatchObject({ status: 503, errorCode: "KS-5001", retryable: false });
    expect(calls).toHaveLength(4);
    expect(waits).toHaveLength(3);
    waits.forEach((wait, retry) => {
      expect(wait).toBeGreaterThanOrEqual(0);
      expect(wait).toBeLessThan(250 * 2 ** retry);
    });
  });

  it("honours Retry-After on a 503 and refuses to wait longer than maxRetryAfterMs", async () => {
    const short = client([error(503, "KS-4203", { "Retry-After": "1" }), ok()]);
    await short.sdk.games.list();
    expect(short.waits).toEqual([1000]);
    const long = client([error(503, "KS-5002", { "Retry-After": "600" })]);
    await expect(long.sdk.games.list()).rejects.toMatchObject({ errorCode: "KS-5002", retryAfterSeconds: 600 });
    expect(long.calls).toHaveLength(1);
  });

  it("never retries a spin without an Idempotency-Key after a 5xx or a lost answer", async () => {
    const failed = client([error(500, "KS-5003"), ok()]);
    await expect(failed.sdk.spin(spin)).rejects.toMatchObject({ errorCode: "KS-5003" });
    expect(failed.calls).toHaveLength(1);
    const lost = client([new TypeError("fetch failed"), ok()]);
    await expect(lost.sdk.spin(spin)).rejects.toBeInstanceOf(PartnerNetworkError);
    expect(lost.calls).toHaveLength(1);
  });

  it("retries a spin without an Idempotency-Key when the code says nothing was done", async () => {
    const empty = client([error(503, "KS-4203", { "Retry-After": "2" }), ok({ spinId: "s" })]);
    await expect(empty.sdk.spin(spin)).resolves.toEqual({ spinId: "s" });
    expect(empty.waits).toEqual([2000]);
    const maintenance = client([error(503, "KS-5002", { "Retry-After": "1" }), ok({ spinId: "s" })]);
    await expect(maintenance.sdk.spin(spin)).resolves.toEqual({ spinId: "s" });
    expect(maintenance.calls).toHaveLength(2);
  });

  it("retries a spin with an Idempotency-Key, sending the same key every time", async () => {
    const { sdk, calls, header } = client([error(500, "KS-5003"), new TypeError("reset"), ok({ spinId: "s" })]);
    await sdk.spin(spin, { idempotencyKey: "spin-123" });
    expect(calls).toHaveLength(3);
    expect([0, 1, 2].map((index) => header(index, "idempotency-key"))).toEqual(["spin-123", "spin-123", "spin-123"]);
    expect(JSON.parse(String(calls[2]?.init.body))).toEqual(spin);
  });

  it("generates one key per spin when asked, kept across that spin's retries", async () => {
    const { sdk, header } = client([error(503, "KS-4203"), ok(), ok()], { autoIdempotencyKeys: true });
    await sdk.spin(spin);
    await sdk.spin(spin);
    const [first, retry, second] = [0, 1, 2].map((index) => header(index, "idempotency-key"));
    expect(first).toMatch(/^[0-9a-f-]{36}$/);
    expect(retry).toBe(first);
    expect(second).not.toBe(first);
  });

  it("retries other writes only when the code says nothing was done", async () => {
    const rolledBack = client([error(500, "KS-5005"), ok({ gameConfigId: 1 })]);
    await rolledBack.sdk.games.register({ parSheetId: "par_1", name: "g", maxWagerUsd: 10 });
    expect(rolledBack.calls).toHaveLength(2);
    const unknown = client([error(500, "KS-5001"), ok()]);
    // A secret rotation is a write the service does not de-duplicate (each makes a new secret).
    await expect(unknown.sdk.webhooks.rotateSecret("whk_1")).rejects.toMatchObject({ errorCode: "KS-5001" });
    expect(unknown.calls).toHaveLength(1);
    const lost = client([new TypeError("fetch failed"), ok()]);
    await expect(lost.sdk.settlements.acknowledge("2026-01-01")).rejects.toBeInstanceOf(PartnerNetworkError);
    expect(lost.calls).toHaveLength(1);
  });

  it("sends every create with an Idempotency-Key, generated per call, and retries any 5xx or lost answer with it", async () => {
    const game = { parSheetId: "par_1", name: "g", maxWagerUsd: 10 };
    const { sdk, calls, header } = client([
      error(500, "KS-5001"),
      new TypeError("socket hang up"),
      ok({ gameConfigId: 1 }),
      ok({ gameConfigId: 2 }),
    ]);
    await expect(sdk.games.register(game)).resolves.toEqual({ gameConfigId: 1 });
    await sdk.games.register(game);
    const keys = [0, 1, 2, 3].map((index) => header(index, "idempotency-key"));
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys.slice(0, 3)).toEqual([keys[0], keys[0], keys[0]]);
    expect(keys[3]).not.toBe(keys[0]);
    expect(calls.map((call) => JSON.parse(String(call.init.body)))).toEqual([game, game, game, game]);
  });

  it("sends the key given to a create, for a sheet and a grant as for a game", async () => {
    const { sdk, calls, header } = client([
      error(502, "HTTP-502"),
      ok({ id: "par_1" }),
      new TypeError("fetch failed"),
      ok({ freeRoundsId: "fr_1" }),
    ]);
    await sdk.parSheets.upload(SAMPLE_PAR_SHEET, { idempotencyKey: "sheet-7" });
    const expiresAt = new Date("2030-01-01T00:00:00Z");
    await sdk.freeRounds.grant({ gameId: 1, playerIds: ["p-1"], rounds: 3, wagerUsd: 0.5, expiresAt });
    expect(calls.map((call) => new URL(call.url).pathname.replace("/base/api/partner/v1", ""))).toEqual([
      "/par-sheets",
      "/par-sheets",
      "/free-rounds",
      "/free-rounds",
    ]);
    expect([0, 1].map((index) => header(index, "idempotency-key"))).toEqual(["sheet-7", "sheet-7"]);
    // A grant is keyed without autoIdempotencyKeys too (that option is the spins').
    expect(header(2, "idempotency-key")).toMatch(/^[0-9a-f-]{36}$/);
    expect(header(3, "idempotency-key")).toBe(header(2, "idempotency-key"));
    expect(JSON.parse(String(calls[3]?.init.body)).expiresAt).toBe("2030-01-01T00:00:00.000Z");
  });

  it("registers a webhook keyed, and retries it with its key after a 5xx: no second endpoint", async () => {
    const { sdk, calls, header } = client([error(503, "KS-5001"), ok({ id: "whk_1", secret: "whsec_x" })]);
    const input = { url: "https://hooks.partner.test/", events: ["spin.large_win" as const] };
    await expect(sdk.webhooks.register(input)).resolves.toMatchObject({ id: "whk_1" });
    expect(calls).toHaveLength(2);
    expect(header(0, "idempotency-key")).toMatch(/^[0-9a-f-]{36}$/);
    expect(header(1, "idempotency-key")).toBe(header(0, "idempotency-key"));
  });

  it("retries reads and deletes after a lost answer", async () => {
    const { sdk, calls } = client([new TypeError("socket hang up"), ok({ id: "whk_1", isActive: false })]);
    await expect(sdk.webhooks.delete("whk_1")).resolves.toMatchObject({ isActive: false });
    expect(calls).toHaveLength(2);
  });
});

describe("helpers", () => {
  it("reads Retry-After as seconds or an HTTP date", () => {
    expect(retryAfterMs("3")).toBe(3000);
    expect(retryAfterMs(null)).toBeUndefined();
    expect(retryAfterMs("soon")).toBeUndefined();
    const now = Date.parse("2026-01-01T00:00:00Z");
    expect(retryAfterMs("Thu, 01 Jan 2026 00:00:05 GMT", now)).toBe(5000);
  });

  it("keeps backoff within [0, min(cap, base·2^n))", () => {
    const policy = { maxRetries: 5, baseDelayMs: 100, maxDelayMs: 1000, maxRetryAfterMs: 60_000 };
    expect(backoffDelay(0, policy, () => 0.999)).toBe(99);
    expect(backoffDelay(3, policy, () => 0.5)).toBe(400);
    expect(backoffDelay(10, policy, () => 0.999)).toBe(999);
    expect(backoffDelay(2, policy, () => 0)).toBe(0);
  });

  it("walks every page of a list", async () => {
    const page = (items: number[], total: number) => ok({ games: items, page: 1, limit: 2, total });
    const { sdk, calls } = client([page([1, 2], 5), page([3, 4], 5), page([5], 5)]);
    const seen: unknown[] = [];
    for await (const game of sdk.all((p) => sdk.games.list(p), "games", 2)) seen.push(game);
    expect(seen).toEqual([1, 2, 3, 4, 5]);
    expect(calls.map((call) => new URL(call.url).searchParams.get("page"))).toEqual(["1", "2", "3"]);
  });
});
