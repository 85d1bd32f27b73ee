import { newId } from "@outcomes/core";
import { ensurePartitions, players, spins } from "@outcomes/db";
import { testApiForFile } from "@outcomes/testkit/file-fixture";
import { addBlock, asRead, type FixtureGame, issueKey, partnerWithGame, spin } from "@outcomes/testkit/spin-path";
import { beforeAll, describe, expect, it } from "vitest";

const api = testApiForFile();
let apiKey: string;
let game: FixtureGame;
const results: any[] = [];

beforeAll(async () => {
  ({ apiKey, game } = await partnerWithGame(api, { maxWagerUsd: 1000 }));
  await addBlock(api, game.gameId, [
    ["T0", 0],
    ["T1", 2],
    ["T2", "2.5"],
    ["T0", 0],
    ["T3", 10],
  ]);
  for (const wagerUsd of [1, 2, 0.4, 3, 0.25]) {
    const response = await spin(api, apiKey, { gameId: game.gameId, playerId: "user@site.example", wagerUsd });
    results.push(response.body);
  }
});

describe("GET /players/{playerId}", () => {
  it("shows the balance and totals in USD", async () => {
    const response = await api.request("/api/partner/v1/players/user@site.example", { apiKey });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      playerId: "user@site.example",
      // wagered 6.65, paid 4 + 1 + 2.5 = 7.5
      balanceUsd: 0.85,
      totalSpins: 5,
      totalWageredUsd: 6.65,
      totalPaidUsd: 7.5,
      createdAt: expect.any(String),
    });
    expect(Date.parse(response.body.createdAt)).toBeLessThanOrEqual(Date.parse(results[0].createdAt));
  });

  it("answers 404 KS-4204 for an unknown player, another partner's or another environment's", async () => {
    const other = await api.createPartner();
    const productionKey = await issueKey(api, game.partnerId, "production");
    for (const [path, key] of [
      ["/api/partner/v1/players/nobody", apiKey],
      ["/api/partner/v1/players/user@site.example", other.apiKey],
      ["/api/partner/v1/players/user@site.example", productionKey],
      ["/api/partner/v1/players/user@site.example/spins", other.apiKey],
      ["/api/partner/v1/players/nobody/spins", apiKey],
    ] as const) {
      const response = await api.request(path, { apiKey: key });
      expect([path, response.status, response.body.errorCode]).toEqual([path, 404, "KS-4204"]);
    }
  });
});

describe("GET /players/{playerId}/spins", () => {
  it("lists spins newest first, each exactly as the spin endpoint answered it", async () => {
    const response = await api.request("/api/partner/v1/players/user@site.example/spins", { apiKey });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ spins: [...results].reverse().map(asRead), page: 1, limit: 20, total: 5 });
  });

  it("pages with page and limit", async () => {
    const page2 = await api.request("/api/partner/v1/players/user@site.example/spins?page=2&limit=2", { apiKey });
    expect(page2.body).toMatchObject({ page: 2, limit: 2, total: 5 });
    expect(page2.body.spins.map((s: any) => s.spinId)).toEqual([results[2].spinId, results[1].spinId]);
    const past = await api.request("/api/partner/v1/players/user@site.example/spins?page=4&limit=2", { apiKey });
    expect(past.body).toMatchObject({ spins: [], page: 4, total: 5 });
  });

  it("pages through spins of many days: the last day's, reaching back across earlier days, past the end", async () => {
    // A player of a week ago with a spin on each of the six days after, stored as the spin statement
    // stores them (one spin's presentation reused), then two spins through the API today.
    const { db } = api.database;
    const day = 86_400_000;
    const firstSpun = Date.now() - 6 * day;
    await ensurePartitions(db, "spins", { from: new Date(firstSpun - day), to: new Date() });
    const [player] = await db
      .insert(players)
      .values({
        partnerId: game.partnerId,
        environment: "sandbox",
        externalId: "veteran@site.example",
        totalSpins: 6,
        createdAt: new Date(firstSpun),
        updatedAt: new Date(firstSpun + 5 * day),
      })
      .returning({ id: players.id });
    const earlier = Array.from({ length: 6 }, (_, n) => ({
      id: newId("spn"),
      partnerId: game.partnerId,
      environment: "sandbox" as const,
      gameId: game.gameId,
      playerId: player!.id,
      forced: true,
      prizeTier: "T0",
      multiplierMillionths: 0,
      wagerMicros: 1_000_000,
      payoutMicros: 0,
      balanceAfterMicros: -(n + 1) * 1_000_000,
      presentation: results[0].presentation,
      createdAt: new Date(firstSpun + n * day),
    }));
    await db.insert(spins).values(earlier);
    await addBlock(api, game.gameId, [
      ["T0", 0],
      ["T1", 2],
    ]);
    const today = [];
    for (const wagerUsd of [1, 1]) {
      const response = await spin(api, apiKey, { gameId: game.gameId, playerId: "veteran@site.example", wagerUsd });
      today.push(response.body.spinId);
    }
    const newestFirst = [...today.reverse(), ...earlier.map((row) => row.id).reverse()];
    for (const [query, expected] of [
      ["limit=2", newestFirst.slice(0, 2)],
      ["limit=3", newestFirst.slice(0, 3)],
      ["page=2&limit=3", newestFirst.slice(3, 6)],
      ["page=3&limit=3", newestFirst.slice(6)],
      ["page=4&limit=3", []],
    ] as const) {
      const response = await api.request(`/api/partner/v1/players/veteran@site.example/spins?${query}`, { apiKey });
      expect([query, response.status, response.body.spins.map((s: any) => s.spinId), response.body.total]).toEqual([
        query,
        200,
        expected,
        8,
      ]);
    }
  });

  it("refuses bad paging with KS-4101", async () => {
    for (const query of ["page=0", "limit=101", "limit=0", "page=x", "limit=1.5"]) {
      const response = await api.request(`/api/partner/v1/players/user@site.example/spins?${query}`, { apiKey });
      expect([query, response.status, response.body.errorCode]).toEqual([query, 400, "KS-4101"]);
    }
  });
});
