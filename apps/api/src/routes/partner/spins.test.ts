import { events, players, spins } from "@outcomes/db";
import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import {
  addBlock,
  createGame,
  type FixtureGame,
  issueKey,
  queueLength,
  spin,
  windowFor,
} from "@outcomes/testkit/spin-path";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let api: TestApi;
let apiKey: string;
let game: FixtureGame;

beforeAll(async () => {
  api = await startTestApi({ LARGE_WIN_THRESHOLD_USD: "50" });
  const partner = await api.createPartner();
  apiKey = partner.apiKey;
  game = await createGame(api, partner.partnerId, { minWagerUsd: 0.5, maxWagerUsd: 100 });
});
afterAll(async () => {
  await api.close();
});

describe("POST /spins validation", () => {
  const valid = () => ({ gameId: game.gameId, playerId: "p-1", wagerUsd: 1 });
  const cases: Array<[string, unknown, number, string]> = [
    ["missing gameId", { playerId: "p", wagerUsd: 1 }, 400, "KS-4102"],
    ["null playerId", { gameId: 1, playerId: null, wagerUsd: 1 }, 400, "KS-4102"],
    ["missing wagerUsd", { gameId: 1, playerId: "p" }, 400, "KS-4102"],
    ["empty playerId", { gameId: 1, playerId: "", wagerUsd: 1 }, 400, "KS-4102"],
    ["string wager", { gameId: 1, playerId: "p", wagerUsd: "1" }, 400, "KS-4101"],
    ["numeric playerId", { gameId: 1, playerId: 42, wagerUsd: 1 }, 400, "KS-4101"],
    ["string gameId", { gameId: "1", playerId: "p", wagerUsd: 1 }, 400, "KS-4101"],
    ["fractional gameId", { gameId: 1.5, playerId: "p", wagerUsd: 1 }, 400, "KS-4101"],
    ["7 decimals", { gameId: 1, playerId: "p", wagerUsd: 1.0000001 }, 400, "KS-4101"],
    ["playerId with a space", { gameId: 1, playerId: "a b", wagerUsd: 1 }, 400, "KS-4101"],
    ["playerId of 129 characters", { gameId: 1, playerId: "x".repeat(129), wagerUsd: 1 }, 400, "KS-4101"],
    ["an array body", [1, 2], 400, "KS-4101"],
  ];
  it.each(cases)("%s → %i %s", async (_name, body, status, code) => {
    const response = await spin(api, apiKey, body);
    expect([response.status, response.body.errorCode]).toEqual([status, code]);
  });

  it("answers malformed JSON with KS-4101", async () => {
    const response = await api.request("/api/partner/v1/spins", {
      method: "POST",
      apiKey,
      headers: { "Content-Type": "application/json" },
      body: '{"gameId": 1,',
    });
    expect([response.status, response.body.errorCode]).toEqual([400, "KS-4101"]);
  });

  it("refuses zero, negative and out-of-range wagers with KS-4103", async () => {
    for (const wagerUsd of [0, -1, 0.49, 100.000001, 1e30]) {
      const response = await spin(api, apiKey, { ...valid(), wagerUsd });
      expect([wagerUsd, response.status, response.body.errorCode]).toEqual([wagerUsd, 400, "KS-4103"]);
    }
  });

  it("accepts the bounds themselves and playerIds of every allowed character", async () => {
    await addBlock(api, game.gameId, [
      ["T0", 0],
      ["T0", 0],
    ]);
    const low = await spin(api, apiKey, { ...valid(), playerId: "Az09-_.:@x", wagerUsd: 0.5 });
    const high = await spin(api, apiKey, { ...valid(), playerId: "y".repeat(128), wagerUsd: 100 });
    expect([low.status, high.status]).toEqual([200, 200]);
  });

  it("refuses a game the partner does not own with KS-4006, and an inactive one with KS-4202", async () => {
    const other = await api.createPartner();
    const foreign = await createGame(api, other.partnerId);
    const inactive = await createGame(api, game.partnerId, { isActive: false });
    for (const gameId of [foreign.gameId, 999_999, 2 ** 40, -3]) {
      const response = await spin(api, apiKey, { ...valid(), gameId });
      expect([response.status, response.body.errorCode]).toEqual([403, "KS-4006"]);
    }
    const response = await spin(api, apiKey, { ...valid(), gameId: inactive.gameId });
    expect([response.status, response.body.errorCode]).toEqual([400, "KS-4202"]);
  });

  it("treats the other environment's game as not owned (KS-4006)", async () => {
    const productionKey = await issueKey(api, game.partnerId, "production");
    const response = await spin(api, productionKey, valid());
    expect([response.status, response.body.errorCode]).toEqual([403, "KS-4006"]);
  });

  it("leaves no player behind after refused spins", async () => {
    const rows = await api.database.db.select().from(players).where(eq(players.externalId, "p-1"));
    expect(rows).toEqual([]);
  });
});

describe("POST /spins outcomes and balances", () => {
  it("pays wager × multiplier floored to the micro and keeps an exact running balance", async () => {
    const own = await createGame(api, game.partnerId, { minWagerUsd: null, maxWagerUsd: 1000 });
    await addBlock(api, own.gameId, [
      ["T0", 0],
      ["T1", 2],
      ["T2", "1.5"],
      ["T3", "0.333333"],
      ["T0", 0],
    ]);
    const wagers = [1, 0.1, 0.3, 0.000007, 2.5];
    const results = [];
    for (const wagerUsd of wagers) {
      const response = await spin(api, apiKey, { gameId: own.gameId, playerId: "exact", wagerUsd });
      expect(response.status).toBe(200);
      results.push(response.body);
    }
    expect(results.map((r) => [r.outcome.prizeTier, r.outcome.multiplier, r.outcome.payoutUsd])).toEqual([
      ["T0", 0, 0],
      ["T1", 2, 0.2],
      ["T2", 1.5, 0.45],
      // 0.000007 × 0.333333 = 0.000002333331 USD → floored to 2 micros
      ["T3", 0.333333, 0.000002],
      ["T0", 0, 0],
    ]);
    // Σ(payout − wager) in micros: -1000000 + 100000 + 150000 - 5 - 2500000
    expect(results.map((r) => r.balance.balanceUsd)).toEqual([-1, -0.9, -0.75, -0.750005, -3.250005]);
    expect(results[1]).toMatchObject({
      gameId: own.gameId,
      playerId: "exact",
      wagerUsd: 0.1,
      balance: { currency: "USD" },
      presentation: {
        comboString: "WIN_T1-WIN_T1-WIN_T1",
        reelSymbols: windowFor("T1"),
        animationHints: {
          winLine: [1, 1, 1],
          celebration: "small",
          highlight: [
            [false, true, false],
            [false, true, false],
            [false, true, false],
          ],
        },
      },
    });
    expect(results[0].presentation.animationHints).toMatchObject({ winLine: null, celebration: "none" });
    expect(results[0].spinId).toMatch(/^spn_/);
    expect(Date.parse(results[0].createdAt)).not.toBeNaN();

    const player = await api.request("/api/partner/v1/players/exact", { apiKey });
    expect(player.body).toMatchObject({
      playerId: "exact",
      balanceUsd: -3.250005,
      totalSpins: 5,
      totalWageredUsd: 3.900007,
      totalPaidUsd: 0.650002,
    });
  });

  it("writes a spin.large_win event in the outbox when the payout reaches the threshold", async () => {
    const own = await createGame(api, game.partnerId, { maxWagerUsd: 1000, largeWinThresholdUsd: 20 });
    const defaulted = await createGame(api, game.partnerId, { maxWagerUsd: 1000 });
    await addBlock(api, own.gameId, [
      ["T3", 10],
      ["T3", 10],
    ]);
    await addBlock(api, defaulted.gameId, [["T3", 10]]);
    const below = await spin(api, apiKey, { gameId: own.gameId, playerId: "lucky", wagerUsd: 1.999999 });
    const atThreshold = await spin(api, apiKey, { gameId: own.gameId, playerId: "lucky", wagerUsd: 2 });
    // LARGE_WIN_THRESHOLD_USD=50 applies to the game without its own threshold.
    const viaDefault = await spin(api, apiKey, { gameId: defaulted.gameId, playerId: "lucky", wagerUsd: 5 });
    expect([below.status, atThreshold.status, viaDefault.status]).toEqual([200, 200, 200]);

    const rows = await api.database.db.select().from(events).where(eq(events.partnerId, game.partnerId));
    const bySpin = new Map(rows.map((row) => [(row.payload as any).data.spinId, row]));
    expect(bySpin.has(below.body.spinId)).toBe(false);
    const event = bySpin.get(atThreshold.body.spinId);
    expect(event?.type).toBe("spin.large_win");
    expect(event?.payload).toEqual({
      id: event?.id,
      sequence: 1,
      type: "spin.large_win",
      createdAt: atThreshold.body.createdAt,
      environment: "sandbox",
      data: {
        spinId: atThreshold.body.spinId,
        gameId: own.gameId,
        playerId: "lucky",
        wagerUsd: 2,
        payoutUsd: 20,
        prizeTier: "T3",
        multiplier: 10,
      },
    });
    expect(bySpin.get(viaDefault.body.spinId)?.type).toBe("spin.large_win");
    expect(rows).toHaveLength(2);
  });
});

describe("POST /spins on an empty queue", () => {
  it("answers 503 KS-4203 with Retry-After, requests generation once, then serves new outcomes", async () => {
    const own = await createGame(api, game.partnerId);
    const first = await spin(api, apiKey, { gameId: own.gameId, playerId: "early", wagerUsd: 1 });
    const second = await spin(api, apiKey, { gameId: own.gameId, playerId: "early", wagerUsd: 1 });
    for (const response of [first, second]) {
      expect([response.status, response.body.errorCode]).toEqual([503, "KS-4203"]);
      expect(Number(response.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    }
    const jobs = await api.deps.producers.queues.blocks.getJobs(["waiting", "prioritized", "delayed"]);
    const generate = jobs.filter((job) => job.name === "blocks.generate" && job.data.gameId === own.gameId);
    expect(generate).toHaveLength(1);
    expect((await api.request("/api/partner/v1/players/early", { apiKey })).status).toBe(404);

    await addBlock(api, own.gameId, [["T1", 2]]);
    const after = await spin(api, apiKey, { gameId: own.gameId, playerId: "early", wagerUsd: 1 });
    expect([after.status, after.body.outcome.payoutUsd, after.body.balance.balanceUsd]).toEqual([200, 2, 1]);
    expect(await queueLength(api, own.gameId)).toBe(0);
    const stored = await api.database.db.select().from(spins).where(eq(spins.gameId, own.gameId));
    expect(stored).toHaveLength(1);
  });
});
