import { newId, SAMPLE_PAR_SHEET } from "@outcomes/core";
import { players, spins } from "@outcomes/db";
import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import { addBlock, asRead, createGame, type FixtureGame, queueItems, spin } from "@outcomes/testkit/spin-path";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let api: TestApi;
let apiKey: string;
let game: FixtureGame;

beforeAll(async () => {
  api = await startTestApi();
  const partner = await api.createPartner();
  apiKey = partner.apiKey;
  // The fixture game's sheet is the sample: T4 pays 25× and shows BAR2 or BAR1 three times, T6 pays 1000×.
  game = await createGame(api, partner.partnerId, { maxWagerUsd: 100, largeWinThresholdUsd: 500 });
});
afterAll(async () => {
  await api.close();
});

const paylineOf = (result: { presentation: { reelSymbols: string[][] } }) =>
  result.presentation.reelSymbols.map((reel) => reel[1]).join("-");
const combinations = (tier: string) =>
  SAMPLE_PAR_SHEET.combinations.filter((c) => c.tier === tier).map((c) => c.symbols.join("-"));

describe("POST /spins with forceTier (sandbox)", () => {
  it("shows a random combination of the tier, takes nothing from the queue, and says forced: true, fairness: null", async () => {
    const [queued] = await addBlock(api, game.gameId, [["T0", 0]]);
    const before = await queueItems(api, game.gameId);
    const forced = [];
    for (let i = 0; i < 30; i++) {
      const response = await spin(api, apiKey, {
        gameId: game.gameId,
        playerId: "tester",
        wagerUsd: 1,
        forceTier: "T4",
      });
      expect(response.status).toBe(200);
      forced.push(response.body);
    }
    expect(await queueItems(api, game.gameId)).toEqual(before);
    for (const result of forced) {
      expect(result).toMatchObject({
        outcome: { prizeTier: "T4", multiplier: 25, payoutUsd: 25 },
        forced: true,
        fairness: null,
      });
      expect(combinations("T4")).toContain(paylineOf(result));
      expect(result.presentation.animationHints).toMatchObject({ winLine: [1, 1, 1], celebration: "big" });
    }
    // Two combinations of equal weight: both show (all 30 alike has probability 2 × 2⁻³⁰).
    expect(new Set(forced.map(paylineOf)).size).toBe(2);
    expect(forced.at(-1).balance.balanceUsd).toBe(30 * 24);

    const normal = await spin(api, apiKey, { gameId: game.gameId, playerId: "tester", wagerUsd: 1 });
    expect(normal.body).toMatchObject({
      outcome: { prizeTier: "T0" },
      forced: false,
      fairness: { blockId: queued!.blockId, index: 0 },
    });
    expect(Object.keys(normal.body)).toEqual(Object.keys(forced[0]));

    const [row] = await api.database.db.select().from(spins).where(eq(spins.id, forced[0].spinId));
    expect(row).toMatchObject({ forced: true, blockId: null, outcomeIndex: null, prizeTier: "T4" });
    // No block committed to a forced outcome: it has no proof.
    const proof = await api.request(`/api/partner/v1/spins/${forced[0].spinId}/proof`, { apiKey });
    expect([proof.status, proof.body.errorCode]).toEqual([404, "KS-4215"]);
    expect(proof.body.message).toMatch(/forced sandbox spin/);
  });

  it("draws T0 as a losing payline and works on an empty queue (no KS-4203)", async () => {
    const empty = await createGame(api, game.partnerId);
    const response = await spin(api, apiKey, { gameId: empty.gameId, playerId: "loser", wagerUsd: 2, forceTier: "T0" });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ outcome: { prizeTier: "T0", payoutUsd: 0 }, forced: true, fairness: null });
    expect(SAMPLE_PAR_SHEET.combinations.map((c) => c.symbols.join("-"))).not.toContain(paylineOf(response.body));
    expect(response.body.presentation.animationHints.winLine).toBeNull();
  });

  it("is otherwise a normal spin: balance, listings, spin.large_win and settlement", async () => {
    const partner = await api.createPartner();
    const own = await createGame(api, partner.partnerId, { maxWagerUsd: 100, largeWinThresholdUsd: 500 });
    await addBlock(api, own.gameId, [["T1", 2]]);
    const normal = await spin(api, partner.apiKey, { gameId: own.gameId, playerId: "p", wagerUsd: 1 });
    const jackpot = await spin(api, partner.apiKey, {
      gameId: own.gameId,
      playerId: "p",
      wagerUsd: 1,
      forceTier: "T6",
    });
    expect(jackpot.body).toMatchObject({ outcome: { prizeTier: "T6", multiplier: 1000, payoutUsd: 1000 } });
    expect(paylineOf(jackpot.body)).toBe("SEVEN-SEVEN-SEVEN");
    expect(jackpot.body.balance.balanceUsd).toBe(1 + 999);

    const player = await api.request("/api/partner/v1/players/p", { apiKey: partner.apiKey });
    expect(player.body).toMatchObject({ totalSpins: 2, totalWageredUsd: 2, totalPaidUsd: 1002, balanceUsd: 1000 });
    const listed = await api.request("/api/partner/v1/players/p/spins", { apiKey: partner.apiKey });
    expect(listed.body.spins).toEqual([asRead(jackpot.body), asRead(normal.body)]);

    const log = await api.request("/api/partner/v1/events", { apiKey: partner.apiKey });
    expect(log.body.events.map((event: { type: string; data: object }) => [event.type, event.data])).toEqual([
      [
        "spin.large_win",
        {
          spinId: jackpot.body.spinId,
          gameId: own.gameId,
          playerId: "p",
          wagerUsd: 1,
          payoutUsd: 1000,
          prizeTier: "T6",
          multiplier: 1000,
        },
      ],
    ]);

    const reportDate = jackpot.body.createdAt.slice(0, 10);
    const report = await api.request(`/api/admin/v1/partners/${partner.partnerId}/settlements`, {
      method: "POST",
      admin: true,
      json: { reportDate, environment: "sandbox" },
    });
    expect(report.status).toBe(201);
    expect(report.body).toMatchObject({ totalSpins: 2, totalWageredUsd: 2, totalPaidUsd: 1002, netUsd: -1000 });
  });

  it("replays a keyed forced spin, and counts forceTier in the request a key was used for", async () => {
    const body = { gameId: game.gameId, playerId: "keyed", wagerUsd: 1, forceTier: "T5" };
    const key = newId("idem");
    const first = await spin(api, apiKey, body, key);
    const again = await spin(api, apiKey, body, key);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ forced: true, fairness: null, outcome: { prizeTier: "T5" } });
    expect([again.status, again.headers.get("idempotent-replayed")]).toEqual([200, "true"]);
    expect(again.body).toEqual(first.body);
    for (const other of [
      { ...body, forceTier: "T6" },
      { ...body, forceTier: undefined },
    ]) {
      const reused = await spin(api, apiKey, other, key);
      expect([reused.status, reused.body.errorCode]).toEqual([400, "KS-4101"]);
      expect(reused.body.message).toMatch(/already used for another request/);
    }
    const unforcedKey = newId("idem");
    await addBlock(api, game.gameId, [["T0", 0]]);
    expect((await spin(api, apiKey, { ...body, forceTier: undefined }, unforcedKey)).body.forced).toBe(false);
    const forcedWithIt = await spin(api, apiKey, body, unforcedKey);
    expect([forcedWithIt.status, forcedWithIt.body.errorCode]).toEqual([400, "KS-4101"]);
    const player = await api.request("/api/partner/v1/players/keyed", { apiKey });
    expect(player.body.totalSpins).toBe(2);
  });

  it("treats forceTier null as absent", async () => {
    await addBlock(api, game.gameId, [["T1", 2]]);
    const response = await spin(api, apiKey, { gameId: game.gameId, playerId: "nulls", wagerUsd: 1, forceTier: null });
    expect(response.body).toMatchObject({ outcome: { prizeTier: "T1" }, forced: false });
  });

  it.each([
    ["a tier the sheet does not have", "T7", /not a tier of the game's PAR sheet/],
    ["an empty tier", "", /not a tier of the game's PAR sheet/],
    ["a number", 6, /forceTier/],
  ])("refuses %s with 400 KS-4101, changing nothing", async (_name, forceTier, message) => {
    const before = await queueItems(api, game.gameId);
    const response = await spin(api, apiKey, { gameId: game.gameId, playerId: "refused", wagerUsd: 1, forceTier });
    expect([response.status, response.body.errorCode]).toEqual([400, "KS-4101"]);
    expect(JSON.stringify(response.body)).toMatch(message);
    expect(await queueItems(api, game.gameId)).toEqual(before);
    expect(await api.database.db.select().from(players).where(eq(players.externalId, "refused"))).toEqual([]);
  });

  it("refuses a production key with 400 KS-4101 saying forced outcomes are sandbox only", async () => {
    const partner = await api.createPartner({ environment: "production" });
    const live = await createGame(api, partner.partnerId, { environment: "production" });
    await addBlock(api, live.gameId, [["T1", 2]]);
    for (const idempotencyKey of [undefined, newId("idem")]) {
      const body = { gameId: live.gameId, playerId: "live", wagerUsd: 1, forceTier: "T1" };
      const response = await spin(api, partner.apiKey, body, idempotencyKey);
      expect([response.status, response.body.errorCode]).toEqual([400, "KS-4101"]);
      expect(response.body.message).toMatch(/sandbox/);
    }
    expect(await api.database.db.select().from(players).where(eq(players.externalId, "live"))).toEqual([]);
    expect((await queueItems(api, live.gameId)).length).toBe(1);
  });

  it("keeps the forced spin's outcome columns empty: the schema refuses a forced spin with a block", async () => {
    const [row] = await api.database.db.select().from(spins).where(eq(spins.forced, true)).limit(1);
    await expect(
      api.database.db.update(spins).set({ blockId: 1, outcomeIndex: 0 }).where(eq(spins.id, row!.id)),
    ).rejects.toMatchObject({ cause: { constraint_name: "spins_outcome_or_forced" } });
  });
});
