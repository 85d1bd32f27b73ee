import { newId } from "@outcomes/core";
import { freeRoundGrants, freeRoundPlayers, games } from "@outcomes/db";
import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import { cliAgainst, errorCode } from "@outcomes/testkit/cli";
import { testApiForFile } from "@outcomes/testkit/file-fixture";
import { createGame, type FixtureGame, issueKey, partnerWithGame } from "@outcomes/testkit/spin-path";
import { and, count, eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";

/**
 * Free-round grants over HTTP (CONTRACT §14): grant, get, list, a player's rounds, cancel; the
 * status computed at read time (expiry with no job), validation that writes nothing, isolation
 * (§2, §9), the operator CLI, and the routes before the rollout of release 2 finished (§15).
 */
const api = testApiForFile();
let apiKey: string;
let game: FixtureGame;

beforeAll(async () => {
  ({ apiKey, game } = await partnerWithGame(api, { minWagerUsd: 0.1, maxWagerUsd: 100 }));
});

const P = "/api/partner/v1";
const DAY_MS = 86_400_000;
const ahead = (ms: number) => new Date(Date.now() + ms).toISOString();
const body = (fields: Record<string, unknown> = {}) => ({
  gameId: game.gameId,
  playerIds: ["player-1", "player-2"],
  rounds: 5,
  wagerUsd: 0.5,
  expiresAt: ahead(7 * DAY_MS),
  ...fields,
});
const grant = (json: unknown, key = apiKey, via = api) =>
  via.request(`${P}/free-rounds`, { method: "POST", apiKey: key, json });
const getGrant = (id: string, key = apiKey) => api.request(`${P}/free-rounds/${id}`, { apiKey: key });
const playerRounds = (id: string, playerId: string, key = apiKey) =>
  api.request(`${P}/free-rounds/${id}/players/${playerId}`, { apiKey: key });
const cancel = (id: string, key = apiKey) =>
  api.request(`${P}/free-rounds/${id}/cancel`, { method: "POST", apiKey: key });
const list = (query: string, key = apiKey) => api.request(`${P}/free-rounds?${query}`, { apiKey: key });

/** Rows of both tables: a refused grant must leave them as they were. */
async function stored() {
  const { db } = api.database;
  const [[grants], [players]] = await Promise.all([
    db.select({ value: count() }).from(freeRoundGrants),
    db.select({ value: count() }).from(freeRoundPlayers),
  ]);
  return { grants: grants?.value, players: players?.value };
}

async function created(json: unknown, key = apiKey) {
  const answer = await grant(json, key);
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  return answer.body;
}

describe("a grant's life", () => {
  it("is granted, read back, listed newest first, followed per player and cancelled (twice)", async () => {
    const partner = await api.createPartner();
    const own = await createGame(api, partner.partnerId, { maxWagerUsd: 10 });
    const expiresAt = ahead(30 * DAY_MS);
    const json = { gameId: own.gameId, playerIds: ["ann", "bob"], rounds: 5, wagerUsd: 0.25, expiresAt };
    const first = await created(json, partner.apiKey);
    expect(first).toEqual({
      freeRoundsId: expect.stringMatching(/^fr_[0-9A-Za-z]{22}$/),
      gameId: own.gameId,
      wagerUsd: 0.25,
      rounds: 5,
      playerCount: 2,
      expiresAt,
      status: "active",
      createdAt: expect.any(String),
      cancelledAt: null,
    });
    expect(await getGrant(first.freeRoundsId, partner.apiKey)).toMatchObject({ status: 200, body: first });
    const rows = await api.database.db
      .select()
      .from(freeRoundPlayers)
      .where(eq(freeRoundPlayers.grantId, first.freeRoundsId));
    expect(rows.map((row) => [row.externalPlayerId, row.rounds, row.roundsUsed]).sort()).toEqual([
      ["ann", 5, 0],
      ["bob", 5, 0],
    ]);

    const second = await created({ ...json, playerIds: ["cid"] }, partner.apiKey);
    const third = await created({ ...json, rounds: 1000, wagerUsd: 10 }, partner.apiKey);
    const page1 = await list("limit=2", partner.apiKey);
    expect(page1.body).toEqual({ freeRounds: [third, second], page: 1, limit: 2, total: 3 });
    const page2 = await list("limit=2&page=2", partner.apiKey);
    expect(page2.body).toEqual({ freeRounds: [first], page: 2, limit: 2, total: 3 });
    expect((await list("limit=0", partner.apiKey)).body.errorCode).toBe("KS-4101");

    expect((await playerRounds(first.freeRoundsId, "ann", partner.apiKey)).body).toEqual({
      freeRoundsId: first.freeRoundsId,
      playerId: "ann",
      rounds: 5,
      roundsUsed: 0,
      roundsLeft: 5,
      paidUsd: 0,
    });
    // Rounds are used by the spin path; here its effect is written directly.
    await api.database.db
      .update(freeRoundPlayers)
      .set({ roundsUsed: 2, paidMicros: 1_250_000 })
      .where(and(eq(freeRoundPlayers.grantId, first.freeRoundsId), eq(freeRoundPlayers.externalPlayerId, "ann")));
    expect((await playerRounds(first.freeRoundsId, "ann", partner.apiKey)).body).toMatchObject({
      roundsUsed: 2,
      roundsLeft: 3,
      paidUsd: 1.25,
    });
    for (const playerId of ["cid", "nobody", "not%20an%20id"]) {
      const answer = await playerRounds(first.freeRoundsId, playerId, partner.apiKey);
      expect([playerId, answer.status, answer.body.errorCode]).toEqual([playerId, 404, "KS-4204"]);
    }

    const cancelled = await cancel(first.freeRoundsId, partner.apiKey);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toEqual({ ...first, status: "cancelled", cancelledAt: expect.any(String) });
    expect(Date.parse(cancelled.body.cancelledAt)).toBeGreaterThanOrEqual(Date.parse(first.createdAt));
    const again = await cancel(first.freeRoundsId, partner.apiKey);
    expect([again.status, again.body]).toEqual([200, cancelled.body]);
    expect((await getGrant(first.freeRoundsId, partner.apiKey)).body).toEqual(cancelled.body);
    expect((await playerRounds(first.freeRoundsId, "ann", partner.apiKey)).body).toMatchObject({
      roundsUsed: 2,
      roundsLeft: 0,
      paidUsd: 1.25,
    });
    expect((await list("limit=2&page=2", partner.apiKey)).body.freeRounds).toEqual([cancelled.body]);
    expect((await getGrant(second.freeRoundsId, partner.apiKey)).body.status).toBe("active");
  });

  it("of concurrent cancels one takes effect, and every one answers it", async () => {
    const target = await created(body());
    const answers = await Promise.all(Array.from({ length: 6 }, () => cancel(target.freeRoundsId)));
    expect(answers.map((answer) => answer.status)).toEqual(Array(6).fill(200));
    expect(new Set(answers.map((answer) => answer.body.cancelledAt)).size).toBe(1);
    expect((await getGrant(target.freeRoundsId)).body).toEqual(answers[0]?.body);
  });

  it("expires at expiresAt with no job having run, and an expired grant can still be cancelled", async () => {
    const expiresAt = ahead(1500);
    const short = await created(body({ expiresAt }));
    expect(short.status).toBe("active");
    expect((await playerRounds(short.freeRoundsId, "player-1")).body.roundsLeft).toBe(5);
    await new Promise((resolve) => setTimeout(resolve, Date.parse(expiresAt) - Date.now() + 50));
    expect((await getGrant(short.freeRoundsId)).body).toEqual({ ...short, status: "expired" });
    expect((await playerRounds(short.freeRoundsId, "player-1")).body).toMatchObject({ rounds: 5, roundsLeft: 0 });
    const cancelled = await cancel(short.freeRoundsId);
    expect([cancelled.status, cancelled.body.status]).toEqual([200, "cancelled"]);
    expect(cancelled.body.cancelledAt).not.toBeNull();
  });
});

describe("Idempotency-Key", () => {
  it("makes one grant of concurrent repeats on two API processes, each answered with it", async () => {
    const other = await startTestApi({}, { shareWith: api });
    try {
      const before = await stored();
      const json = body({ playerIds: ["keyed-1", "keyed-2", "keyed-3"] });
      const send = (via: TestApi) =>
        via.request(`${P}/free-rounds`, {
          method: "POST",
          apiKey,
          json,
          headers: { "Idempotency-Key": "grant-campaign-7" },
        });
      const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => send(i % 2 ? other : api)));
      expect(answers.map((answer) => answer.status)).toEqual(Array(8).fill(201));
      expect(new Set(answers.map((answer) => JSON.stringify(answer.body))).size).toBe(1);
      expect(answers.filter((answer) => answer.headers.get("idempotent-replayed") === "true")).toHaveLength(7);
      expect(await stored()).toEqual({ grants: before.grants! + 1, players: before.players! + 3 });
      // The same key with another body is another request.
      const changed = await other.request(`${P}/free-rounds`, {
        method: "POST",
        apiKey,
        json: { ...json, rounds: 6 },
        headers: { "Idempotency-Key": "grant-campaign-7" },
      });
      expect([changed.status, changed.body.errorCode]).toEqual([400, "KS-4101"]);
      expect(await stored()).toEqual({ grants: before.grants! + 1, players: before.players! + 3 });
    } finally {
      await other.close();
    }
  });
});

describe("Idempotency-Key after the expiry", () => {
  it("replays a grant whose expiresAt has passed since, rather than refusing the retry", async () => {
    const expiresAt = ahead(1_200);
    const send = () =>
      api.request(`${P}/free-rounds`, {
        method: "POST",
        apiKey,
        json: body({ expiresAt }),
        headers: { "Idempotency-Key": "grant-expiring" },
      });
    const first = await send();
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, Date.parse(expiresAt) - Date.now() + 50)));
    const retry = await send();
    expect([retry.status, retry.headers.get("idempotent-replayed")]).toEqual([201, "true"]);
    expect(retry.body).toEqual(first.body);
    // Without the key the same body is a new grant, refused: its expiry has passed.
    const fresh = await grant(body({ expiresAt }));
    expect([fresh.status, fresh.body.errorCode]).toEqual([400, "KS-4101"]);
  });
});

describe("POST /free-rounds refuses, writing nothing", () => {
  const ids = (n: number) => Array.from({ length: n }, (_, i) => `p-${i}`);
  it.each([
    ["an empty body", null, 400, "KS-4102"],
    ["no playerIds", { playerIds: undefined }, 400, "KS-4102"],
    ["null rounds", { rounds: null }, 400, "KS-4102"],
    ["an empty expiresAt", { expiresAt: "" }, 400, "KS-4102"],
    ["no wagerUsd", { wagerUsd: undefined }, 400, "KS-4102"],
    ["a string gameId", { gameId: "1" }, 400, "KS-4101"],
    ["no players", { playerIds: [] }, 400, "KS-4101"],
    ["1,001 players", { playerIds: ids(1001) }, 400, "KS-4101"],
    ["a player id with a space", { playerIds: ["a b"] }, 400, "KS-4101"],
    ["a player id of 129 characters", { playerIds: ["x".repeat(129)] }, 400, "KS-4101"],
    ["playerIds as a string", { playerIds: "player-1" }, 400, "KS-4101"],
    ["0 rounds", { rounds: 0 }, 400, "KS-4101"],
    ["1,001 rounds", { rounds: 1001 }, 400, "KS-4101"],
    ["1.5 rounds", { rounds: 1.5 }, 400, "KS-4101"],
    ["a wager of 7 decimals", { wagerUsd: 0.1234567 }, 400, "KS-4101"],
    ["a string wager", { wagerUsd: "1" }, 400, "KS-4101"],
    ["a zero wager", { wagerUsd: 0 }, 400, "KS-4103"],
    ["a negative wager", { wagerUsd: -1 }, 400, "KS-4103"],
    ["a wager below the game's minimum", { wagerUsd: 0.05 }, 400, "KS-4103"],
    ["a wager above the game's maximum", { wagerUsd: 100.000001 }, 400, "KS-4103"],
    ["an expiry in the past", { expiresAt: ahead(-1000) }, 400, "KS-4101"],
    ["an expiry beyond 90 days", { expiresAt: ahead(91 * DAY_MS) }, 400, "KS-4101"],
    ["an expiry without a time zone", { expiresAt: "2030-01-01T00:00:00" }, 400, "KS-4101"],
    ["an expiry that is no date", { expiresAt: "next week" }, 400, "KS-4101"],
    ["an unknown game", { gameId: 2_000_000_000 }, 403, "KS-4006"],
    ["a game id beyond int4", { gameId: 2 ** 40 }, 403, "KS-4006"],
  ] as const)("%s: %i %s", async (_name, fields, status, code) => {
    const before = await stored();
    // The fields over a valid body (whose game exists only once the tests run), or no fields at all.
    const answer = await grant(fields === null ? {} : body(fields));
    expect([answer.status, answer.body.errorCode], JSON.stringify(answer.body)).toEqual([status, code]);
    expect(await stored()).toEqual(before);
  });

  it("names each duplicate player id and where it first appears", async () => {
    const before = await stored();
    const answer = await grant(body({ playerIds: ["a", "b", "a", "c", "b"] }));
    expect([answer.status, answer.body.errorCode]).toEqual([400, "KS-4101"]);
    expect(answer.body.details).toEqual([
      { path: "playerIds[2]", message: "duplicate of playerIds[0] (a)" },
      { path: "playerIds[4]", message: "duplicate of playerIds[1] (b)" },
    ]);
    expect(await stored()).toEqual(before);
  });

  it("takes 1,000 players and the bounds of the game exactly", async () => {
    const big = await created(
      body({ playerIds: ids(1000), rounds: 1000, wagerUsd: 100, expiresAt: ahead(90 * DAY_MS) }),
    );
    expect(big.playerCount).toBe(1000);
    const [players] = await api.database.db
      .select({ value: count() })
      .from(freeRoundPlayers)
      .where(eq(freeRoundPlayers.grantId, big.freeRoundsId));
    expect(players?.value).toBe(1000);
    expect((await created(body({ wagerUsd: 0.1 }))).wagerUsd).toBe(0.1);
  });

  it("refuses an inactive game with 400 KS-4202, as a spin would", async () => {
    const inactive = await createGame(api, game.partnerId, { isActive: false });
    const before = await stored();
    const answer = await grant(body({ gameId: inactive.gameId }));
    expect([answer.status, answer.body.errorCode]).toEqual([400, "KS-4202"]);
    expect(await stored()).toEqual(before);
    await api.database.db.update(games).set({ isActive: true }).where(eq(games.id, inactive.gameId));
  });
});

describe("isolation", () => {
  it("another partner's or environment's grant is 404 KS-4219, and their games 403 KS-4006", async () => {
    const mine = await created(body());
    const stranger = await api.createPartner();
    const strangerGame = await createGame(api, stranger.partnerId);
    const production = await issueKey(api, game.partnerId, "production");
    const productionGame = await createGame(api, game.partnerId, { environment: "production" });

    for (const key of [stranger.apiKey, production]) {
      expect((await getGrant(mine.freeRoundsId, key)).body.errorCode).toBe("KS-4219");
      expect((await playerRounds(mine.freeRoundsId, "player-1", key)).body.errorCode).toBe("KS-4219");
      const refused = await cancel(mine.freeRoundsId, key);
      expect([refused.status, refused.body.errorCode]).toEqual([404, "KS-4219"]);
      const listed = (await list("limit=100", key)).body.freeRounds.map((each: any) => each.freeRoundsId);
      expect(listed).not.toContain(mine.freeRoundsId);
    }
    expect((await getGrant(mine.freeRoundsId)).body).toEqual(mine);

    const before = await stored();
    for (const [gameId, key] of [
      [strangerGame.gameId, apiKey],
      [game.gameId, stranger.apiKey],
      [game.gameId, production],
      [productionGame.gameId, apiKey],
    ] as const) {
      const answer = await grant(body({ gameId }), key);
      expect([gameId, answer.status, answer.body.errorCode]).toEqual([gameId, 403, "KS-4006"]);
    }
    expect(await stored()).toEqual(before);

    // The production key's own grant is its environment's alone.
    const live = await created(body({ gameId: productionGame.gameId }), production);
    expect((await getGrant(live.freeRoundsId, production)).body).toEqual(live);
    expect((await getGrant(live.freeRoundsId)).body.errorCode).toBe("KS-4219");
    const sandboxList = (await list("limit=100")).body.freeRounds.map((each: any) => each.freeRoundsId);
    expect(sandboxList).toContain(mine.freeRoundsId);
    expect(sandboxList).not.toContain(live.freeRoundsId);
  });

  it("ids that name nothing are 404 KS-4219", async () => {
    for (const id of [newId("fr"), "fr_short", "not%20an%20id", "fr_%00"]) {
      for (const answer of [await getGrant(id), await playerRounds(id, "player-1"), await cancel(id)]) {
        expect([id, answer.status, answer.body.errorCode]).toEqual([id, 404, "KS-4219"]);
      }
    }
  });
});

describe("npm run cli -- free-rounds", () => {
  const { cli, cliJson } = cliAgainst(() => api);

  it("lists a partner's grants (one environment or both) and shows any grant with its partner", async () => {
    const partner = await api.createPartner();
    const sandboxGame = await createGame(api, partner.partnerId);
    const production = await issueKey(api, partner.partnerId, "production");
    const productionGame = await createGame(api, partner.partnerId, { environment: "production" });
    const sandboxGrant = await created(body({ gameId: sandboxGame.gameId }), partner.apiKey);
    const productionGrant = await created(body({ gameId: productionGame.gameId }), production);
    const owned = (grant: object, environment: string) => ({ ...grant, partnerId: partner.partnerId, environment });

    expect(await cliJson("free-rounds", "list", "--partner", partner.partnerId)).toEqual({
      freeRounds: [owned(productionGrant, "production"), owned(sandboxGrant, "sandbox")],
      page: 1,
      limit: 20,
      total: 2,
    });
    const sandboxOnly = await cliJson(
      "free-rounds",
      "list",
      "--partner",
      partner.partnerId,
      "--environment",
      "sandbox",
    );
    expect([sandboxOnly.total, sandboxOnly.freeRounds]).toEqual([1, [owned(sandboxGrant, "sandbox")]]);
    const table = await cli("free-rounds", "list", "--partner", partner.partnerId, "--limit", "1");
    expect(table.stdout).toMatch(/^ID\s+GAME\s+WAGER USD\s+ROUNDS\s+PLAYERS\s+STATUS\s+EXPIRES AT\s+ENVIRONMENT/);
    expect(table.stdout).toContain(productionGrant.freeRoundsId);
    expect(table.stdout).toContain("page 1 of 2, 1 shown, 2 in total");

    await cancel(sandboxGrant.freeRoundsId, partner.apiKey);
    const shown = await cliJson("free-rounds", "get", sandboxGrant.freeRoundsId);
    expect(shown).toEqual(owned((await getGrant(sandboxGrant.freeRoundsId, partner.apiKey)).body, "sandbox"));
    const text = await cli("free-rounds", "get", sandboxGrant.freeRoundsId);
    expect(text.stdout).toMatch(/status\s+cancelled/);
    expect(text.stdout).toMatch(new RegExp(`partnerId\\s+${partner.partnerId}`));
    expect(errorCode(await cli("free-rounds", "get", newId("fr")))).toEqual([1, "error KS-4219"]);
    expect(errorCode(await cli("free-rounds", "get", "no such grant"))).toEqual([1, "error KS-4219"]);
  });
});
