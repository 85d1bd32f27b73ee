import { CURRENT_RELEASE } from "@outcomes/core";
import { finishRollout } from "@outcomes/db";
import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import { testApiForFile } from "@outcomes/testkit/file-fixture";
import { REPLAY_ENV, type ReplaySpins, replayLink, replaySpins } from "@outcomes/testkit/replays";
import { beforeAll, describe, expect, it, vi } from "vitest";

/**
 * Replay links and pages over HTTP (CONTRACT §17): making a link, the page and its JSON, the one
 * 404 of every link that opens nothing, the query string ignored, the secrets (stored, shared by
 * every process; REPLAY_SECRETS rotated), the per-address limit across processes, and the gate.
 * The browser's side is replay-browser.test.ts.
 */
const api = testApiForFile(REPLAY_ENV);
let world: ReplaySpins;
beforeAll(async () => {
  world = await replaySpins(api);
});

const HOUR = 3_600_000;
const partnerPath = (path: string) => `/api/partner/v1${path}`;

describe("POST /spins/{spinId}/replay-link", () => {
  it("answers 201 {url, expiresAt}: 168 hours by default, or expiresInHours (1..2160)", async () => {
    const before = Date.now();
    const byDefault = await replayLink(api, world.game.apiKey, world.won.spinId);
    expect(byDefault.url).toMatch(new RegExp(`^${api.baseUrl}/replay/[A-Za-z0-9_-]{63}$`));
    expect(Date.parse(byDefault.expiresAt)).toBeGreaterThan(before + 168 * HOUR - 1000);
    expect(Date.parse(byDefault.expiresAt)).toBeLessThanOrEqual(Date.now() + 168 * HOUR);
    for (const hours of [1, 2160]) {
      const link = await replayLink(api, world.game.apiKey, world.won.spinId, { expiresInHours: hours });
      expect(Math.round((Date.parse(link.expiresAt) - Date.now()) / HOUR)).toBe(hours);
    }
    // An empty body with a JSON Content-Type is no body.
    const empty = await api.request(partnerPath(`/spins/${world.won.spinId}/replay-link`), {
      method: "POST",
      apiKey: world.game.apiKey,
      headers: { "Content-Type": "application/json" },
    });
    expect(empty.status).toBe(201);
    // The spin id is nowhere in the link.
    expect(byDefault.url).not.toContain(world.won.spinId.slice(4));
  });

  it("refuses a bad expiry with 400 KS-4101, and another partner's or an unknown spin with 404 KS-4215", async () => {
    // A null field is a missing one (KS-4102), as in every body.
    for (const [expiresInHours, code] of [
      [0, "KS-4101"],
      [2161, "KS-4101"],
      [1.5, "KS-4101"],
      ["24", "KS-4101"],
      [null, "KS-4102"],
    ]) {
      const answer = await api.request(partnerPath(`/spins/${world.won.spinId}/replay-link`), {
        method: "POST",
        apiKey: world.game.apiKey,
        json: { expiresInHours },
      });
      expect([answer.status, answer.body.errorCode], String(expiresInHours)).toEqual([400, code]);
    }
    const stranger = await api.createPartner();
    const production = await api.createPartner({ environment: "production" });
    for (const [apiKey, spinId] of [
      [stranger.apiKey, world.won.spinId],
      [production.apiKey, world.won.spinId],
      [world.game.apiKey, "spn_0000000000000000000000"],
      [world.game.apiKey, "not-an-id"],
    ] as const) {
      const answer = await api.request(partnerPath(`/spins/${spinId}/replay-link`), { method: "POST", apiKey });
      expect([answer.status, answer.body.errorCode]).toEqual([404, "KS-4215"]);
    }
  });
});

describe("GET /replay/{token} and /replay/{token}.json", () => {
  it("serve the spin as played, with its proof and block, and no player or partner", async () => {
    const link = await replayLink(api, world.game.apiKey, world.won.spinId);
    const data = await api.request(`${link.path}.json`);
    expect(data.status).toBe(200);
    expect(data.headers.get("access-control-allow-origin")).toBe("*");
    const { won } = world;
    const proof = await api.request(partnerPath(`/spins/${won.spinId}/proof`), { apiKey: world.game.apiKey });
    const block = await api.request(partnerPath(`/games/${won.gameId}/blocks/${won.fairness.blockId}`), {
      apiKey: world.game.apiKey,
    });
    expect(data.body).toEqual({
      spinId: won.spinId,
      environment: "sandbox",
      game: { gameId: won.gameId, name: "Lucky Sevens", symbols: expect.any(Array) },
      createdAt: won.createdAt,
      wagerUsd: 1.25,
      outcome: won.outcome,
      presentation: won.presentation,
      balance: won.balance,
      forced: false,
      freeRound: false,
      voided: null,
      fairness: won.fairness,
      proof: proof.body,
      block: block.body,
      expiresAt: link.expiresAt,
    });
    expect(data.body.game.symbols[0]).toEqual({ id: "SEVEN", name: "Red Seven" });
    expect(JSON.stringify(data.body)).not.toContain(world.playerId);

    const page = await api.request(link.path);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("text/html");
    expect(page.headers.get("content-security-policy")).toMatch(/^default-src 'self'/);
    expect(page.headers.get("cache-control")).toBe("private, no-store");
    expect(page.headers.get("referrer-policy")).toBe("no-referrer");
    expect(page.body).toContain("<h1>Lucky Sevens</h1>");
    expect(page.body).toContain("$1.25");
    expect(page.body).not.toContain(world.playerId);
    // Nothing from elsewhere, no inline script: only the service's own assets.
    expect(page.body).not.toMatch(/(src|href)="(https?:)?\/\//);
    const assets = [...page.body.matchAll(/(?:src|href)="(\/replay\/assets\/[^"]+)"/g)].map((match) => match[1]!);
    expect(assets).toHaveLength(2);
    for (const asset of assets) {
      const served = await fetch(api.baseUrl + asset);
      expect(served.status).toBe(200);
      expect(served.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    }
    const stale = await api.request("/replay/assets/replay-check.0000000000000000.js");
    expect([stale.status, stale.body.errorCode]).toEqual([404, "KS-4215"]);
  });

  it("show voided, free-round and forced spins as such", async () => {
    const json = async (spinId: string) =>
      (await api.request(`${(await replayLink(api, world.game.apiKey, spinId)).path}.json`)).body;
    expect(await json(world.voided.spinId)).toMatchObject({
      voided: { reason: "Wallet refused the debit: insufficient funds", voidedAt: world.voided.voided.voidedAt },
      proof: { spinId: world.voided.spinId },
    });
    expect(await json(world.freeRound.spinId)).toMatchObject({ freeRound: true, wagerUsd: 0.5 });
    expect(await json(world.forced.spinId)).toMatchObject({ forced: true, fairness: null, proof: null, block: null });
  });

  it("answer an expired, an altered and an unknown token with the same 404", async () => {
    const link = await replayLink(api, world.game.apiKey, world.won.spinId);
    const expired = await api.deps.replayLinks.link(world.won.spinId, {
      baseUrl: "",
      hours: 1,
      now: Date.now() - 2 * HOUR,
    });
    const last = link.token.at(-2) === "A" ? "B" : "A";
    const altered = `${link.token.slice(0, -2)}${last}${link.token.at(-1)}`;
    const paths = [expired.url, `/replay/${altered}`, `/replay/${"Q".repeat(63)}`, "/replay/x", "/replay/..%2F"];
    const pages = await Promise.all(paths.map((path) => api.request(path)));
    for (const page of pages) {
      expect(page.status).toBe(404);
      expect(page.headers.get("content-type")).toContain("text/html");
      expect(page.body).toBe(pages[0]!.body);
    }
    expect(pages[0]!.body).toContain("This replay link does not work");
    const bodies = await Promise.all(paths.map((path) => api.request(`${path}.json`)));
    for (const body of bodies) {
      expect(body.status).toBe(404);
      expect({ ...body.body, requestId: "" }).toEqual({
        message: "Replay link not found (it may have expired)",
        errorCode: "KS-4215",
        requestId: "",
      });
    }
  });

  it("trust nothing in the query string", async () => {
    const link = await replayLink(api, world.game.apiKey, world.won.spinId);
    const plain = await api.request(`${link.path}.json`);
    const other = world.lost.spinId;
    const queried = await api.request(`${link.path}.json?spinId=${other}&expiresAt=2000-01-01&token=x`);
    expect(queried.body).toEqual(plain.body);
    const page = await api.request(`${link.path}?spinId=${other}`);
    expect(page.body).toBe((await api.request(link.path)).body);
  });
});

describe("replay secrets", () => {
  it("are generated once and kept in Postgres: every API process opens every other's links", async () => {
    const second = await startTestApi(REPLAY_ENV, { shareWith: api });
    try {
      const link = await second.deps.replayLinks.link(world.won.spinId, { baseUrl: second.baseUrl });
      expect((await api.request(`${new URL(link.url).pathname}.json`)).status).toBe(200);
    } finally {
      await second.close();
    }
  });

  it("rotate with REPLAY_SECRETS: the first signs, the previous one still opens its links, a dropped one none", async () => {
    const old = "old-replay-secret-0123456789abcdefghij";
    const fresh = "new-replay-secret-0123456789abcdefghij";
    const start = (secrets: string) => startTestApi({ ...REPLAY_ENV, REPLAY_SECRETS: secrets }, { shareWith: api });
    const [before, rotated, after] = [await start(old), await start(`${fresh},${old}`), await start(fresh)];
    try {
      const path = async (from: TestApi) =>
        new URL((await from.deps.replayLinks.link(world.won.spinId, { baseUrl: from.baseUrl })).url).pathname;
      const oldLink = await path(before);
      const newLink = await path(rotated);
      expect((await rotated.request(`${oldLink}.json`)).status).toBe(200);
      expect((await rotated.request(`${newLink}.json`)).status).toBe(200);
      expect((await after.request(`${newLink}.json`)).status).toBe(200);
      expect((await after.request(`${oldLink}.json`)).status).toBe(404);
      // The stored secret is not among them: its links do not open either.
      expect(
        (await before.request(`${(await replayLink(api, world.game.apiKey, world.won.spinId)).path}.json`)).status,
      ).toBe(404);
    } finally {
      await Promise.all([before.close(), rotated.close(), after.close()]);
    }
  });
});

describe("the per-address limit (REPLAY_RATE_LIMIT_PER_MINUTE)", () => {
  it("holds across API processes; over it the page and the JSON answer 429 with Retry-After", async () => {
    const limited = await startTestApi({ ...REPLAY_ENV, REPLAY_RATE_LIMIT_PER_MINUTE: "3" }, { shareWith: api });
    const other = await startTestApi({ ...REPLAY_ENV, REPLAY_RATE_LIMIT_PER_MINUTE: "3" }, { shareWith: api });
    try {
      // Both have read that the rollout finished (each process reads it at most once a second), so
      // every request below reaches the limit; and a fresh bucket (earlier requests drew from the 60).
      for (const instance of [limited, other]) {
        await vi.waitFor(async () => expect(await instance.deps.rollout.on("replay-pages")).toBe(true), {
          timeout: 5000,
        });
      }
      await api.deps.redis.del(api.deps.keys.replayRequests("127.0.0.1"));
      const link = await replayLink(api, world.game.apiKey, world.won.spinId);
      const answers = [
        await limited.request(link.path),
        await other.request(`${link.path}.json`),
        await limited.request("/replay/made-up"),
        await other.request(link.path),
        await limited.request(`${link.path}.json`),
      ];
      expect(
        answers.map((answer) => answer.status),
        JSON.stringify(answers.map((answer) => answer.body)),
      ).toEqual([200, 200, 404, 429, 429]);
      expect(answers[3]!.headers.get("content-type")).toContain("text/html");
      expect(answers[3]!.body).toContain("Too many requests");
      expect(answers[4]!.body).toMatchObject({ errorCode: "KS-4292" });
      for (const refused of answers.slice(3)) {
        expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
        expect(Number(refused.headers.get("retry-after"))).toBeLessThanOrEqual(20);
      }
    } finally {
      await Promise.all([limited.close(), other.close()]);
    }
  });
});

describe("before `release finish` (gate replay-pages)", () => {
  it("answers 404 KS-4215 on the new routes and ignores the new parameters, as release 2 does; then opens", async () => {
    const running = await startTestApi(REPLAY_ENV, { rollout: "running" });
    try {
      const { game, won } = await replaySpins(running);
      const post = await running.request(partnerPath(`/spins/${won.spinId}/replay-link`), {
        method: "POST",
        apiKey: game.apiKey,
      });
      expect([post.status, post.body.errorCode]).toEqual([404, "KS-4215"]);
      const link = await running.deps.replayLinks.link(won.spinId, { baseUrl: "" });
      for (const path of [link.url, `${link.url}.json`, "/replay/assets/replay.css"]) {
        const answer = await running.request(path);
        expect([answer.status, answer.body.errorCode], path).toEqual([404, "KS-4215"]);
      }
      const spin = await running.request(partnerPath(`/spins/${won.spinId}?include=proof`), { apiKey: game.apiKey });
      expect(spin.body).toEqual(won);
      const list = await running.request(
        partnerPath("/players/player-42/spins?include=proof&replayLinks=true&limit=1"),
        {
          apiKey: game.apiKey,
        },
      );
      expect(Object.keys(list.body.spins[0])).not.toContain("proof");
      expect(Object.keys(list.body.spins[0])).not.toContain("replayUrl");

      await finishRollout(running.database.db, CURRENT_RELEASE);
      running.deps.rollout.forget();
      expect((await running.request(`${link.url}.json`)).status).toBe(200);
      const opened = await running.request(partnerPath(`/spins/${won.spinId}/replay-link`), {
        method: "POST",
        apiKey: game.apiKey,
      });
      expect(opened.status).toBe(201);
    } finally {
      await running.close();
    }
  });
});
