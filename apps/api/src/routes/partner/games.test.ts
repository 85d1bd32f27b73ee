import { SAMPLE_PAR_SHEET } from "@outcomes/core";
import { games } from "@outcomes/db";
import { generationDeduplicationId } from "@outcomes/queue";
import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import { registerTestGame } from "@outcomes/testkit/games";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({ BLOCK_SIZE: "50", MIN_READY_BLOCKS: "2", TARGET_READY_BLOCKS: "3" });
});
afterAll(async () => {
  await api.close();
});

async function partnerWithSheet(environment: "sandbox" | "production" = "sandbox") {
  const partner = await api.createPartner({ environment });
  const sheet = await api.request("/api/partner/v1/par-sheets", {
    method: "POST",
    apiKey: partner.apiKey,
    json: SAMPLE_PAR_SHEET,
  });
  return { ...partner, parSheetId: sheet.body.id as string };
}

const register = (apiKey: string, json: unknown) =>
  api.request("/api/partner/v1/games", { method: "POST", apiKey, json });

describe("POST /games", () => {
  it("registers a game with every field, defaults shown as in force, and queues its first generation", async () => {
    const { apiKey, parSheetId } = await partnerWithSheet();
    const created = await register(apiKey, { parSheetId, name: "Sevens", maxWagerUsd: 25.5 });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      gameConfigId: expect.any(Number),
      name: "Sevens",
      parSheetId,
      minWagerUsd: null,
      maxWagerUsd: 25.5,
      largeWinThresholdUsd: 1000,
      isActive: true,
      rtp: 0.96,
      createdAt: expect.any(String),
    });
    const jobId = await api.deps.producers.queues.blocks.getDeduplicationJobId(
      generationDeduplicationId(created.body.gameConfigId),
    );
    const job = jobId ? await api.deps.producers.queues.blocks.getJob(jobId) : undefined;
    expect(job?.name).toBe("blocks.generate");
    expect(job?.data).toEqual({ gameId: created.body.gameConfigId });

    const full = await register(apiKey, {
      parSheetId,
      name: "Sevens deluxe",
      minWagerUsd: 0.1,
      maxWagerUsd: 5,
      largeWinThresholdUsd: 250.125,
    });
    expect(full.body).toMatchObject({ minWagerUsd: 0.1, maxWagerUsd: 5, largeWinThresholdUsd: 250.125 });
    const [row] = await api.database.db.select().from(games).where(eq(games.id, full.body.gameConfigId));
    expect([row?.minWagerMicros, row?.maxWagerMicros, row?.largeWinThresholdMicros]).toEqual([
      100_000, 5_000_000, 250_125_000,
    ]);
  });

  it("answers the contract's codes for bad registrations, and registers nothing", async () => {
    const { apiKey, parSheetId, partnerId } = await partnerWithSheet();
    const cases: [unknown, number, string][] = [
      [{ name: "A", maxWagerUsd: 1 }, 400, "KS-4102"],
      [{ parSheetId, name: "", maxWagerUsd: 1 }, 400, "KS-4102"],
      [{ parSheetId, name: "A", maxWagerUsd: null }, 400, "KS-4102"],
      [{ parSheetId, name: "A", maxWagerUsd: "10" }, 400, "KS-4101"],
      [{ parSheetId, name: "A", maxWagerUsd: 1.0000001 }, 400, "KS-4101"],
      [{ parSheetId, name: "A", maxWagerUsd: 0 }, 400, "KS-4101"],
      [{ parSheetId, name: "A", minWagerUsd: -1, maxWagerUsd: 1 }, 400, "KS-4101"],
      [{ parSheetId, name: 7, maxWagerUsd: 1 }, 400, "KS-4101"],
      [{ parSheetId, name: "A", minWagerUsd: 2, maxWagerUsd: 2 }, 400, "KS-4109"],
      [{ parSheetId, name: "A", minWagerUsd: 3, maxWagerUsd: 2 }, 400, "KS-4109"],
      [{ parSheetId: "par_unknown", name: "A", maxWagerUsd: 1 }, 404, "KS-4205"],
    ];
    for (const [json, status, code] of cases) {
      const response = await register(apiKey, json);
      expect([response.status, response.body.errorCode], JSON.stringify(json)).toEqual([status, code]);
    }
    expect(await api.database.db.select().from(games).where(eq(games.partnerId, partnerId))).toEqual([]);
  });

  it("refuses a duplicate name per partner and environment with 409 KS-4108", async () => {
    const first = await partnerWithSheet();
    expect((await register(first.apiKey, { parSheetId: first.parSheetId, name: "Dup", maxWagerUsd: 1 })).status).toBe(
      201,
    );
    const again = await register(first.apiKey, { parSheetId: first.parSheetId, name: "Dup", maxWagerUsd: 2 });
    expect([again.status, again.body.errorCode]).toEqual([409, "KS-4108"]);
    const second = await partnerWithSheet();
    expect((await register(second.apiKey, { parSheetId: second.parSheetId, name: "Dup", maxWagerUsd: 1 })).status).toBe(
      201,
    );
  });

  it("needs the caller's own ACTIVE sheet: others' are 404 KS-4205, pending or retired 400 KS-4208", async () => {
    const owner = await partnerWithSheet();
    const other = await api.createPartner();
    const foreign = await register(other.apiKey, { parSheetId: owner.parSheetId, name: "X", maxWagerUsd: 1 });
    expect([foreign.status, foreign.body.errorCode]).toEqual([404, "KS-4205"]);

    const production = await partnerWithSheet("production");
    const pending = await register(production.apiKey, { parSheetId: production.parSheetId, name: "P", maxWagerUsd: 1 });
    expect([pending.status, pending.body.errorCode]).toEqual([400, "KS-4208"]);
    await api.request(`/api/admin/v1/par-sheets/${production.parSheetId}/approve`, { method: "POST", admin: true });
    expect(
      (await register(production.apiKey, { parSheetId: production.parSheetId, name: "P", maxWagerUsd: 1 })).status,
    ).toBe(201);
    await api.request(`/api/admin/v1/par-sheets/${production.parSheetId}/retire`, { method: "POST", admin: true });
    const retired = await register(production.apiKey, { parSheetId: production.parSheetId, name: "Q", maxWagerUsd: 1 });
    expect(retired.body.errorCode).toBe("KS-4208");
  });
});

describe("GET and PATCH /games", () => {
  it("lists and gets the caller's games only; anything else is 403 KS-4006", async () => {
    const { apiKey, parSheetId } = await partnerWithSheet();
    const a = await register(apiKey, { parSheetId, name: "A", maxWagerUsd: 1 });
    await register(apiKey, { parSheetId, name: "B", maxWagerUsd: 1 });
    const list = await api.request("/api/partner/v1/games?limit=1&page=2", { apiKey });
    expect(list.body).toMatchObject({ page: 2, limit: 1, total: 2 });
    expect(list.body.games.map((game: { name: string }) => game.name)).toEqual(["B"]);
    const got = await api.request(`/api/partner/v1/games/${a.body.gameConfigId}`, { apiKey });
    expect(got.body).toEqual(a.body);

    const stranger = await api.createPartner();
    const production = await api.createPartner({ environment: "production" });
    for (const [key, path] of [
      [stranger.apiKey, `/api/partner/v1/games/${a.body.gameConfigId}`],
      [production.apiKey, `/api/partner/v1/games/${a.body.gameConfigId}`],
      [apiKey, "/api/partner/v1/games/999999"],
      [apiKey, "/api/partner/v1/games/abc"],
      [apiKey, "/api/partner/v1/games/99999999999"],
    ] as const) {
      const response = await api.request(path, { apiKey: key });
      expect([response.status, response.body.errorCode], path).toEqual([403, "KS-4006"]);
    }
    expect((await api.request("/api/partner/v1/games", { apiKey: stranger.apiKey })).body.games).toEqual([]);
  });

  it("updates only the fields sent and checks the merged bounds", async () => {
    const { apiKey, parSheetId } = await partnerWithSheet();
    const created = await register(apiKey, { parSheetId, name: "Patch me", minWagerUsd: 1, maxWagerUsd: 10 });
    const path = `/api/partner/v1/games/${created.body.gameConfigId}`;
    const patch = (json: unknown) => api.request(path, { method: "PATCH", apiKey, json });

    const off = await patch({ isActive: false, largeWinThresholdUsd: 50 });
    expect(off.body).toMatchObject({ isActive: false, largeWinThresholdUsd: 50, minWagerUsd: 1, maxWagerUsd: 10 });
    expect((await patch({ maxWagerUsd: 1 })).body.errorCode).toBe("KS-4109");
    expect((await patch({ minWagerUsd: 10 })).body.errorCode).toBe("KS-4109");
    expect((await patch({ minWagerUsd: null, maxWagerUsd: 0.5 })).body).toMatchObject({
      minWagerUsd: null,
      maxWagerUsd: 0.5,
    });
    expect((await patch({ largeWinThresholdUsd: null })).body.largeWinThresholdUsd).toBe(1000);
    expect((await patch({})).body).toMatchObject({ isActive: false, maxWagerUsd: 0.5 });

    const codes: [unknown, string][] = [
      [{ isActive: "no" }, "KS-4101"],
      [{ isActive: null }, "KS-4102"],
      [{ maxWagerUsd: null }, "KS-4102"],
      [{ maxWagerUsd: -5 }, "KS-4101"],
      [{ maxWagerUsd: 1.1234567 }, "KS-4101"],
      [{ name: "Renamed" }, "KS-4101"],
    ];
    for (const [json, code] of codes) expect((await patch(json)).body.errorCode, JSON.stringify(json)).toBe(code);
    expect((await api.request(path, { apiKey })).body).toMatchObject({
      name: "Patch me",
      isActive: false,
      minWagerUsd: null,
      maxWagerUsd: 0.5,
    });
    const stranger = await api.createPartner();
    const foreign = await api.request(path, { method: "PATCH", apiKey: stranger.apiKey, json: { isActive: true } });
    expect([foreign.status, foreign.body.errorCode]).toEqual([403, "KS-4006"]);
  });
});

describe("maxWagerUsd and its largest payout stay within the partner's spin ceiling (issue 33)", () => {
  const setCeiling = (partnerId: string, spinCeilingUsd: unknown) =>
    api.request(`/api/admin/v1/partners/${partnerId}`, { method: "PATCH", admin: true, json: { spinCeilingUsd } });

  function expectCeilingRefusal(
    response: { status: number; body: Record<string, unknown> },
    largest: string,
    ceiling: string,
  ) {
    expect([response.status, response.body.errorCode]).toEqual([400, "KS-4101"]);
    const message = expect.stringMatching(
      new RegExp(
        `at most ${largest.replace(".", "\\.")} with this PAR sheet: one spin may stake or pay at most ${ceiling} USD`,
      ),
    );
    expect(response.body.message).toEqual(message);
    expect(response.body.details).toEqual([{ path: "maxWagerUsd", message }]);
  }

  it("refuses a game whose top payout passes the default 1,000,000 USD, in POST and PATCH", async () => {
    // The sample's largest multiplier is 1000: 1000 USD pays 1,000,000 USD at most.
    const { apiKey, parSheetId, partnerId } = await partnerWithSheet();
    expectCeilingRefusal(
      await register(apiKey, { parSheetId, name: "Beyond", maxWagerUsd: 1000.000001 }),
      "1000",
      "1000000",
    );
    expect(await api.database.db.select().from(games).where(eq(games.partnerId, partnerId))).toEqual([]);
    const created = await register(apiKey, { parSheetId, name: "Largest", maxWagerUsd: 1000 });
    expect([created.status, created.body.maxWagerUsd]).toEqual([201, 1000]);
    const path = `/api/partner/v1/games/${created.body.gameConfigId}`;
    const patch = (json: unknown) => api.request(path, { method: "PATCH", apiKey, json });
    expectCeilingRefusal(await patch({ maxWagerUsd: 5000, isActive: false }), "1000", "1000000");
    expect((await api.request(path, { apiKey })).body).toMatchObject({ maxWagerUsd: 1000, isActive: true });
  });

  it("bounds the wager alone when the top multiplier is below 1× (the issue's sheet)", async () => {
    // A production partner's approved sheet whose only win pays 0.000001× (certified RTP 0.0000005).
    const tiny = {
      ...SAMPLE_PAR_SHEET,
      name: "Tiny",
      prizeTiers: [
        { tier: "T0", multiplier: 0, weight: 1 },
        { tier: "T1", multiplier: 0.000001, weight: 1 },
      ],
      combinations: [SAMPLE_PAR_SHEET.combinations.find((combination) => combination.tier === "T6")!].map(
        (combination) => ({ ...combination, tier: "T1" }),
      ),
      certifiedRtp: 0.0000005,
    };
    const partner = await api.createPartner({ environment: "production" });
    const sheet = await api.request("/api/partner/v1/par-sheets", {
      method: "POST",
      apiKey: partner.apiKey,
      json: tiny,
    });
    expect(sheet.status).toBe(201);
    await api.request(`/api/admin/v1/par-sheets/${sheet.body.id}/approve`, { method: "POST", admin: true });
    const json = (maxWagerUsd: number) => ({ parSheetId: sheet.body.id, name: `Tiny ${maxWagerUsd}`, maxWagerUsd });
    expectCeilingRefusal(await register(partner.apiKey, json(9_007_199_254.74)), "1000000", "1000000");
    expect((await register(partner.apiKey, json(1_000_000))).status).toBe(201);

    // The operator raises the ceiling: to 5,000,000,000 USD the game is still refused, to
    // 9,007,199,254.74 USD it is accepted.
    expect((await setCeiling(partner.partnerId, 5_000_000_000)).status).toBe(200);
    expectCeilingRefusal(await register(partner.apiKey, json(9_007_199_254.74)), "5000000000", "5000000000");
    const raised = await setCeiling(partner.partnerId, 9_007_199_254.74);
    expect([raised.status, raised.body.spinCeilingUsd]).toEqual([200, 9_007_199_254.74]);
    expect((await register(partner.apiKey, json(9_007_199_254.74))).status).toBe(201);
  });

  it("reaches the exact range at a ceiling near 2^53 − 1 micro-USD", async () => {
    const { apiKey, parSheetId, partnerId } = await partnerWithSheet();
    expect((await setCeiling(partnerId, 9_007_199_254.74)).status).toBe(200);
    // floor(9,007,199,254,740,000 / 1000) micro-USD.
    const largest = 9_007_199.25474;
    const ceiling = "9007199254.74";
    expectCeilingRefusal(
      await register(apiKey, { parSheetId, name: "Beyond", maxWagerUsd: 9_007_199.254741 }),
      "9007199.25474",
      ceiling,
    );
    const created = await register(apiKey, { parSheetId, name: "Largest", maxWagerUsd: largest });
    expect([created.status, created.body.maxWagerUsd]).toEqual([201, largest]);

    // Lowering the ceiling binds what is registered or re-bounded next; the game keeps its bounds.
    expect((await setCeiling(partnerId, null)).body.spinCeilingUsd).toBe(1_000_000);
    const path = `/api/partner/v1/games/${created.body.gameConfigId}`;
    expect((await api.request(path, { apiKey })).body.maxWagerUsd).toBe(largest);
    const patched = await api.request(path, { method: "PATCH", apiKey, json: { isActive: false } });
    expect(patched.body).toMatchObject({ isActive: false, maxWagerUsd: largest });
    expectCeilingRefusal(
      await api.request(path, { method: "PATCH", apiKey, json: { maxWagerUsd: 2000 } }),
      "1000",
      "1000000",
    );
  });

  it("says a maxWagerUsd past the exact range is past it, not that it has too many decimals", async () => {
    const { apiKey, parSheetId } = await partnerWithSheet();
    const past = await register(apiKey, { parSheetId, name: "Past", maxWagerUsd: 9_007_199_254.75 });
    expect([past.status, past.body.errorCode]).toEqual([400, "KS-4101"]);
    expect(past.body.details).toEqual([
      { path: "maxWagerUsd", message: "past the exact range of amounts (2^53 − 1 micro-USD, about 9007199254.74 USD)" },
    ]);
    const precise = await register(apiKey, { parSheetId, name: "Precise", maxWagerUsd: 1.0000001 });
    expect(precise.body.details).toEqual([{ path: "maxWagerUsd", message: "at most 6 decimal places" }]);
  });
});

describe("GET /api/admin/v1/games/{gameId}/reserve", () => {
  it("shows the reserve of a filled game (either environment), and 404 KS-4201 for an unknown id", async () => {
    const game = await registerTestGame(api);
    const reserve = await api.request(`/api/admin/v1/games/${game.gameId}/reserve`, { admin: true });
    expect(reserve.status).toBe(200);
    expect(reserve.body).toEqual({
      gameId: game.gameId,
      drawMode: "independent",
      readyBlocks: 3,
      servingBlocks: 0,
      exhaustedBlocks: 0,
      remainingOutcomes: 150,
      queuedOutcomes: 150,
      lastSequence: 3,
      blockSize: 50,
      minReadyBlocks: 2,
      targetReadyBlocks: 3,
      lowReserve: false,
    });
    const production = await registerTestGame(api, { partner: await api.createPartner({ environment: "production" }) });
    const filled = await api.request(`/api/admin/v1/games/${production.gameId}/reserve`, { admin: true });
    expect(filled.body).toMatchObject({ readyBlocks: 3, queuedOutcomes: 150 });
    for (const id of ["424242", "abc"]) {
      const unknown = await api.request(`/api/admin/v1/games/${id}/reserve`, { admin: true });
      expect([unknown.status, unknown.body.errorCode]).toEqual([404, "KS-4201"]);
    }
  });
});
