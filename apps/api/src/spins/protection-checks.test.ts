import { players, spinRefusals, spins } from "@outcomes/db";
import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import { addBlock, createGame, type OutcomeSpec, queueLength, spin } from "@outcomes/testkit/spin-path";
import { and, eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * The spin checks of CONTRACT §16 through HTTP, on the real group commit: a refused spin writes
 * nothing and its outcome goes back to the queue.
 */
const P = "/api/partner/v1";
let api: TestApi;

beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api.close();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const LOSSES: OutcomeSpec[] = Array.from({ length: 200 }, () => ["T0", 0] as OutcomeSpec);

async function setUp(defaultJurisdiction?: string) {
  const { partnerId, apiKey } = await api.createPartner();
  const game = await createGame(api, partnerId, { maxWagerUsd: 100 });
  await addBlock(api, game.gameId, LOSSES);
  if (defaultJurisdiction) {
    const patched = await api.request(`/api/admin/v1/partners/${partnerId}`, {
      method: "PATCH",
      admin: true,
      json: { defaultJurisdiction },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.defaultJurisdiction).toBe(defaultJurisdiction);
  }
  return { partnerId, apiKey, gameId: game.gameId };
}

const protect = (apiKey: string, playerId: string, json: unknown) =>
  api.request(`${P}/players/${playerId}/protection`, { method: "PUT", apiKey, json });

async function spinsOf(partnerId: string, playerId: string): Promise<number> {
  const [row] = await api.database.db
    .select({ n: sql<number>`count(*)::int` })
    .from(spins)
    .innerJoin(players, eq(players.id, spins.playerId))
    .where(and(eq(spins.partnerId, partnerId), eq(players.externalId, playerId)));
  return row!.n;
}

describe("UK-GC pace (minRoundMs 2500)", () => {
  it("refuses a round 1 s after the last with Retry-After; honouring it succeeds; nothing is written or used", async () => {
    const { partnerId, apiKey, gameId } = await setUp("UK-GC");
    const body = { gameId, playerId: "uk-1", wagerUsd: 1 };
    expect((await spin(api, apiKey, body)).status).toBe(200);
    const queued = await queueLength(api, gameId);
    await sleep(1000);
    const refused = await spin(api, apiKey, body);
    expect(refused.status).toBe(429);
    expect(refused.body.errorCode).toBe("KS-4293");
    expect(refused.body.details.retryAfterMs).toBeGreaterThan(1000);
    expect(refused.body.details.retryAfterMs).toBeLessThanOrEqual(1500);
    expect(refused.headers.get("retry-after")).toBe("2");
    expect(await queueLength(api, gameId)).toBe(queued);
    expect(await spinsOf(partnerId, "uk-1")).toBe(1);
    await sleep(refused.body.details.retryAfterMs);
    const honoured = await spin(api, apiKey, body);
    expect(honoured.status).toBe(200);
    expect(await spinsOf(partnerId, "uk-1")).toBe(2);
  });
});

describe("DE-GLUSTV (minRoundMs 5000, maxWagerUsd 1)", () => {
  it("lets exactly one of 20 concurrent spins of one player pass, on two API processes", async () => {
    const { partnerId, apiKey, gameId } = await setUp("DE-GLUSTV");
    const second = await startTestApi({}, { shareWith: api });
    try {
      const queued = await queueLength(api, gameId);
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          spin(i % 2 === 0 ? api : second, apiKey, { gameId, playerId: "de-1", wagerUsd: 1 }),
        ),
      );
      const statuses = answers.map((answer) => answer.status).sort();
      expect(statuses).toEqual([200, ...Array.from({ length: 19 }, () => 429)]);
      expect(answers.filter((a) => a.status === 429).every((a) => a.body.errorCode === "KS-4293")).toBe(true);
      expect(await spinsOf(partnerId, "de-1")).toBe(1);
      expect(await queueLength(api, gameId)).toBe(queued - 1);
    } finally {
      await second.close();
    }
  });

  it("refuses a stake above 1 USD with 400 KS-4220 and its facts", async () => {
    const { partnerId, apiKey, gameId } = await setUp("DE-GLUSTV");
    const refused = await spin(api, apiKey, { gameId, playerId: "de-2", wagerUsd: 1.5 });
    expect(refused.status).toBe(400);
    expect(refused.body.errorCode).toBe("KS-4220");
    expect(refused.body.details).toEqual({ jurisdiction: "DE-GLUSTV", maxWagerUsd: 1 });
    expect(await spinsOf(partnerId, "de-2")).toBe(0);
  });
});

describe("self-exclusion and cooling-off", () => {
  it("refuses the excluded player with 403 KS-4221, and not the partner's other players", async () => {
    const { partnerId, apiKey, gameId } = await setUp();
    const until = new Date(Date.now() + 86_400_000).toISOString();
    expect((await protect(apiKey, "excluded", { selfExcludedUntil: until })).status).toBe(200);
    const refused = await spin(api, apiKey, { gameId, playerId: "excluded", wagerUsd: 1 });
    expect(refused.status).toBe(403);
    expect(refused.body.errorCode).toBe("KS-4221");
    expect(refused.body.details).toEqual({ restriction: "self_exclusion", until });
    expect((await spin(api, apiKey, { gameId, playerId: "other", wagerUsd: 1 })).status).toBe(200);
    expect(await spinsOf(partnerId, "excluded")).toBe(0);

    expect((await protect(apiKey, "cooling", { coolingOffUntil: until })).status).toBe(200);
    const cooling = await spin(api, apiKey, { gameId, playerId: "cooling", wagerUsd: 1 });
    expect([cooling.status, cooling.body.details?.restriction]).toEqual([403, "cooling_off"]);
  });
});

describe("loss limit", () => {
  it("stops the spin that would pass a daily loss limit of 10 USD; a void gives the room back", async () => {
    const { partnerId, apiKey, gameId } = await setUp();
    expect((await protect(apiKey, "limited", { lossLimitUsd: { daily: 10 } })).status).toBe(200);
    const body = { gameId, playerId: "limited", wagerUsd: 4 };
    const first = await spin(api, apiKey, body);
    expect(first.status).toBe(200);
    expect((await spin(api, apiKey, body)).status).toBe(200);
    const refused = await spin(api, apiKey, body);
    expect(refused.status).toBe(403);
    expect(refused.body.errorCode).toBe("KS-4222");
    expect(refused.body.details).toEqual({ limit: "loss", period: "daily", remainingUsd: 2 });
    expect((await spin(api, apiKey, { ...body, wagerUsd: 2 })).status).toBe(200);
    expect(await spinsOf(partnerId, "limited")).toBe(3);

    const voided = await api.request(`${P}/spins/${first.body.spinId}/void`, {
      method: "POST",
      apiKey,
      json: { reason: "wallet refused" },
    });
    expect(voided.status).toBe(200);
    expect((await spin(api, apiKey, body)).status).toBe(200);
    expect((await spin(api, apiKey, { ...body, wagerUsd: 0.1 })).status).toBe(403);
  });

  it("counts a wager limit on total wagers", async () => {
    const { apiKey, gameId } = await setUp();
    expect((await protect(apiKey, "wagering", { wagerLimitUsd: { weekly: 5 } })).status).toBe(200);
    expect((await spin(api, apiKey, { gameId, playerId: "wagering", wagerUsd: 5 })).status).toBe(200);
    const refused = await spin(api, apiKey, { gameId, playerId: "wagering", wagerUsd: 0.1 });
    expect([refused.status, refused.body.details]).toEqual([
      403,
      { limit: "wager", period: "weekly", remainingUsd: 0 },
    ]);
  });

  it("takes a raise into account 24 h later, a cut at once", async () => {
    const { partnerId, apiKey, gameId } = await setUp();
    expect((await protect(apiKey, "raiser", { lossLimitUsd: { daily: 2 } })).status).toBe(200);
    const raised = await protect(apiKey, "raiser", { lossLimitUsd: { daily: 20 } });
    expect(raised.body.lossLimitUsd.daily).toBe(2);
    expect(raised.body.pendingChanges).toEqual([
      { setting: "lossLimitUsd.daily", value: 20, effectiveAt: expect.any(String) },
    ]);
    const waits = Date.parse(raised.body.pendingChanges[0].effectiveAt) - Date.now();
    expect(waits).toBeGreaterThan(86_390_000);
    expect(waits).toBeLessThanOrEqual(86_400_000);
    expect((await spin(api, apiKey, { gameId, playerId: "raiser", wagerUsd: 5 })).status).toBe(403);

    // A day passes (the clock of the tests: the stored time moved back).
    await api.database.db.execute(sql`
      update player_protections set loss_daily_micros_next_at = clock_timestamp() - interval '1 second'
      where partner_id = ${partnerId} and external_id = 'raiser'`);
    const later = await api.request(`${P}/players/raiser/protection`, { apiKey });
    expect([later.body.lossLimitUsd.daily, later.body.pendingChanges]).toEqual([20, []]);
    expect((await spin(api, apiKey, { gameId, playerId: "raiser", wagerUsd: 5 })).status).toBe(200);

    const cut = await protect(apiKey, "raiser", { lossLimitUsd: { daily: 1 } });
    expect([cut.body.lossLimitUsd.daily, cut.body.pendingChanges]).toEqual([1, []]);
    expect((await spin(api, apiKey, { gameId, playerId: "raiser", wagerUsd: 0.5 })).status).toBe(403);
  });
});

describe("session on the spin result", () => {
  it("counts the session's spins and net, and starts a new one after 30 minutes without a spin", async () => {
    const { partnerId, apiKey, gameId } = await setUp();
    const first = await spin(api, apiKey, { gameId, playerId: "sessions", wagerUsd: 2 });
    expect(first.body.session).toEqual({
      startedAt: first.body.createdAt,
      elapsedMs: 0,
      spins: 1,
      netUsd: -2,
      reminderDue: false,
    });
    const second = await spin(api, apiKey, { gameId, playerId: "sessions", wagerUsd: 0.5 });
    expect(second.body.session).toMatchObject({ startedAt: first.body.createdAt, spins: 2, netUsd: -2.5 });
    expect(second.body.session.elapsedMs).toBe(Date.parse(second.body.createdAt) - Date.parse(first.body.createdAt));

    // 30 minutes pass (the clock of the tests: the player's latest spin moved back).
    await api.database.db.execute(sql`
      update players set updated_at = updated_at - interval '30 minutes'
      where partner_id = ${partnerId} and external_id = 'sessions'`);
    const next = await spin(api, apiKey, { gameId, playerId: "sessions", wagerUsd: 1 });
    expect(next.body.session).toMatchObject({ startedAt: next.body.createdAt, spins: 1, netUsd: -1, elapsedMs: 0 });
  });

  it("is due a reminder on the first spin past each of the profile's marks (UK-GC: 60 minutes)", async () => {
    const { partnerId, apiKey, gameId } = await setUp("UK-GC");
    const body = { gameId, playerId: "reminded", wagerUsd: 1 };
    expect((await spin(api, apiKey, body)).body.session.reminderDue).toBe(false);
    // The session began 61 minutes ago, the latest spin 59 minutes in: the next spin is the first past 60.
    const moveBack = async () =>
      api.database.db.execute(sql`
        update players set session_started_at = clock_timestamp() - interval '61 minutes',
          updated_at = clock_timestamp() - interval '2 minutes'
        where partner_id = ${partnerId} and external_id = 'reminded'`);
    await moveBack();
    const due = await spin(api, apiKey, body);
    expect([due.status, due.body.session.reminderDue, due.body.session.spins]).toEqual([200, true, 2]);
    await api.database.db.execute(sql`
      update players set updated_at = clock_timestamp() - interval '3 seconds'
      where partner_id = ${partnerId} and external_id = 'reminded'`);
    expect((await spin(api, apiKey, body)).body.session.reminderDue).toBe(false);
  });
});

describe("settlement reports", () => {
  it("count the day's refused spins per code", async () => {
    const { partnerId, apiKey, gameId } = await setUp("DE-GLUSTV");
    expect((await spin(api, apiKey, { gameId, playerId: "counted", wagerUsd: 1 })).status).toBe(200);
    expect((await spin(api, apiKey, { gameId, playerId: "counted", wagerUsd: 1 })).status).toBe(429);
    expect((await spin(api, apiKey, { gameId, playerId: "other", wagerUsd: 2 })).status).toBe(400);
    // Counted after each refusal's answer, outside the spin's statement.
    const counted = async () => {
      const [row] = await api.database.db
        .select({ n: sql<number>`coalesce(sum(refused), 0)::int` })
        .from(spinRefusals)
        .where(eq(spinRefusals.partnerId, partnerId));
      return row!.n;
    };
    for (let waited = 0; (await counted()) < 2 && waited < 2000; waited += 20) await sleep(20);
    const reportDate = new Date().toISOString().slice(0, 10);
    const report = await api.request(`/api/admin/v1/partners/${partnerId}/settlements`, {
      method: "POST",
      admin: true,
      json: { reportDate, environment: "sandbox" },
    });
    expect([report.status, report.body.totalSpins, report.body.refusedSpins]).toEqual([
      201,
      1,
      { "KS-4220": 1, "KS-4221": 0, "KS-4222": 0, "KS-4293": 1 },
    ]);
  });
});

describe("a free round under a loss limit", () => {
  it("charges no wager and counts its payout only", async () => {
    const { partnerId, apiKey } = await api.createPartner();
    const game = await createGame(api, partnerId, { maxWagerUsd: 100 });
    await addBlock(api, game.gameId, [
      ["T0", 0],
      ["T3", 2],
      ["T0", 0],
    ]);
    expect((await protect(apiKey, "free", { lossLimitUsd: { daily: 5 } })).status).toBe(200);
    const body = { gameId: game.gameId, playerId: "free", wagerUsd: 5 };
    expect((await spin(api, apiKey, body)).status).toBe(200);
    const grant = await api.request(`${P}/free-rounds`, {
      method: "POST",
      apiKey,
      json: {
        gameId: game.gameId,
        playerIds: ["free"],
        rounds: 1,
        wagerUsd: 1,
        expiresAt: new Date(Date.now() + 86_400_000).toISOString(),
      },
    });
    expect(grant.status).toBe(201);
    // At the limit: a paid spin is refused, the free round is not, and its payout of 2 gives room back.
    expect((await spin(api, apiKey, { ...body, wagerUsd: 0.1 })).body.errorCode).toBe("KS-4222");
    const free = await spin(api, apiKey, {
      gameId: game.gameId,
      playerId: "free",
      freeRoundsId: grant.body.freeRoundsId,
    });
    expect([free.status, free.body.outcome.payoutUsd, free.body.session.netUsd]).toEqual([200, 2, -3]);
    const room = await spin(api, apiKey, { ...body, wagerUsd: 3 });
    expect(room.status).toBe(403);
    expect(room.body.details).toEqual({ limit: "loss", period: "daily", remainingUsd: 2 });
    expect((await spin(api, apiKey, { ...body, wagerUsd: 2 })).status).toBe(200);
  });
});
