import { events, settlementReports } from "@outcomes/db";
import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import { at, operatorGenerate, operatorReissue, settlementWorld, usd, usdText } from "@outcomes/testkit/settlements";
import type { FixtureSpin } from "@outcomes/testkit/spin-rows";
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api.close();
});

async function reportEvents(partnerId: string) {
  const rows = await api.database.db
    .select()
    .from(events)
    .where(and(eq(events.partnerId, partnerId), eq(events.type, "settlement.report_ready")));
  return rows.map((row) => row.payload as { id: string; type: string; environment: string; data: any });
}

describe("operator generation: figures", () => {
  it("sums the day's spins exactly, per game and in total, and writes the event with the report", async () => {
    const world = await settlementWorld(api, "production", 3);
    const [g1, g2, g3] = world.fixture.gameIds as [number, number, number];
    // Awkward amounts (7-digit micros, payouts floored) so a float sum would drift.
    const day: FixtureSpin[] = [];
    for (let i = 0; i < 300; i++) {
      const wagerMicros = 100_001 + ((i * 7_919_993) % 9_899_999);
      const multiplier = [0, 0, 0, 1.5, 2.7, 13.333333][i % 6]!;
      day.push({
        gameId: i % 2 === 0 ? g1 : g2,
        wagerMicros,
        payoutMicros: Math.floor(wagerMicros * multiplier),
        createdAt: new Date(Date.UTC(2026, 2, 14, 0, 0, 0, i * 287_000)),
      });
    }
    await world.addSpins(day);
    // Noise that must not count: the days around it, and another environment of the same partner.
    await world.addSpins([
      { gameId: g1, wagerMicros: 5_000_000, payoutMicros: 0, createdAt: at("2026-03-13T23:59:59.999Z") },
      { gameId: g2, wagerMicros: 5_000_000, payoutMicros: 0, createdAt: at("2026-03-15T00:00:00.000Z") },
    ]);
    const sandbox = await settlementWorld(api, "sandbox");
    await sandbox.addSpins([
      {
        gameId: sandbox.fixture.gameIds[0]!,
        wagerMicros: 1,
        payoutMicros: 1,
        createdAt: at("2026-03-14T12:00:00.000Z"),
      },
    ]);

    const response = await operatorGenerate(api, world.partnerId, {
      reportDate: "2026-03-14",
      environment: "production",
    });
    expect(response.status).toBe(201);

    const wagered = day.reduce((sum, spin) => sum + BigInt(spin.wagerMicros), 0n);
    const paid = day.reduce((sum, spin) => sum + BigInt(spin.payoutMicros), 0n);
    // The day's headline figures: in the report, and in its settlement.report_ready event.
    const headline = {
      reportDate: "2026-03-14",
      status: "GENERATED",
      totalSpins: 300,
      totalWageredUsd: usd(wagered),
      totalPaidUsd: usd(paid),
      netUsd: usd(wagered - paid),
    };
    expect(response.body).toMatchObject({
      ...headline,
      rtp: Number(paid) / Number(wagered),
      acknowledgedAt: null,
      disputedAt: null,
      disputeReason: null,
    });
    const perGame = (gameId: number) => {
      const spins = day.filter((spin) => spin.gameId === gameId);
      const w = spins.reduce((sum, spin) => sum + BigInt(spin.wagerMicros), 0n);
      const p = spins.reduce((sum, spin) => sum + BigInt(spin.payoutMicros), 0n);
      return {
        gameId,
        totalSpins: spins.length,
        totalWageredUsd: usd(w),
        totalPaidUsd: usd(p),
        // No voids or free rounds on that day (void-settlements.test.ts, free-round-spins.test.ts).
        voidedSpins: 0,
        voidedWageredUsd: 0,
        voidedPaidUsd: 0,
        freeRoundSpins: 0,
        freeRoundWagerUsd: 0,
        netUsd: usd(w - p),
        rtp: spins.length ? Number(p) / Number(w) : null,
        exact: {
          totalWageredUsd: usdText(w),
          totalPaidUsd: usdText(p),
          voidedWageredUsd: "0",
          voidedPaidUsd: "0",
          freeRoundWagerUsd: "0",
          netUsd: usdText(w - p),
        },
        figuresExact: true,
      };
    };
    // The game without spins is listed with zeros and rtp null.
    expect(response.body.games).toEqual([perGame(g1), perGame(g2), perGame(g3)]);
    expect(response.body.games[2]).toMatchObject({ totalSpins: 0, totalWageredUsd: 0, rtp: null });

    const [event, ...more] = await reportEvents(world.partnerId);
    expect(more).toEqual([]);
    expect(event).toMatchObject({
      type: "settlement.report_ready",
      environment: "production",
      data: headline,
    });
    expect(event?.id).toMatch(/^evt_/);
  });

  it("puts a spin at 23:59:59.999 and one at 00:00:00.000 into different days' reports", async () => {
    const world = await settlementWorld(api, "sandbox", 1);
    const gameId = world.fixture.gameIds[0]!;
    await world.addSpins([
      { gameId, wagerMicros: 1_000_000, payoutMicros: 0, createdAt: at("2026-04-01T00:00:00.000Z") },
      { gameId, wagerMicros: 2_000_000, payoutMicros: 0, createdAt: at("2026-04-01T23:59:59.999Z") },
      { gameId, wagerMicros: 4_000_000, payoutMicros: 8_000_000, createdAt: at("2026-04-02T00:00:00.000Z") },
    ]);
    const first = await operatorGenerate(api, world.partnerId, { reportDate: "2026-04-01", environment: "sandbox" });
    const second = await operatorGenerate(api, world.partnerId, { reportDate: "2026-04-02", environment: "sandbox" });
    expect([first.body.totalSpins, first.body.totalWageredUsd, first.body.totalPaidUsd]).toEqual([2, 3, 0]);
    expect([second.body.totalSpins, second.body.totalWageredUsd, second.body.netUsd, second.body.rtp]).toEqual([
      1, 4, -4, 2,
    ]);
  });

  it("reports a day without spins with zeros and rtp null", async () => {
    const world = await settlementWorld(api, "sandbox", 1);
    const response = await operatorGenerate(api, world.partnerId, { reportDate: "2026-01-05", environment: "sandbox" });
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({ totalSpins: 0, totalWageredUsd: 0, totalPaidUsd: 0, netUsd: 0, rtp: null });
  });
});

describe("operator generation: re-runs and concurrency", () => {
  it("replaces a GENERATED report's figures when spins changed, and only then announces it again", async () => {
    const world = await settlementWorld(api, "sandbox", 1);
    const gameId = world.fixture.gameIds[0]!;
    const body = { reportDate: "2026-02-10", environment: "sandbox" };
    await world.addSpins([{ gameId, wagerMicros: 1_000_000, payoutMicros: 0, createdAt: at("2026-02-10T10:00:00Z") }]);
    const first = await operatorGenerate(api, world.partnerId, body);
    const same = await operatorGenerate(api, world.partnerId, body);
    expect(same.status).toBe(201);
    expect(same.body).toEqual(first.body);
    expect(await reportEvents(world.partnerId)).toHaveLength(1);

    await world.addSpins([{ gameId, wagerMicros: 500_000, payoutMicros: 0, createdAt: at("2026-02-10T11:00:00Z") }]);
    const refreshed = await operatorGenerate(api, world.partnerId, body);
    expect(refreshed.body).toMatchObject({ status: "GENERATED", totalSpins: 2, totalWageredUsd: 1.5 });
    expect(Date.parse(refreshed.body.generatedAt)).toBeGreaterThan(Date.parse(first.body.generatedAt));
    const announced = await reportEvents(world.partnerId);
    expect(announced.map((event) => event.data.totalSpins).sort()).toEqual([1, 2]);
  });

  it("yields one report and one event when two generations run at once", async () => {
    const world = await settlementWorld(api, "sandbox", 2);
    const rows: FixtureSpin[] = Array.from({ length: 50 }, (_, i) => ({
      gameId: world.fixture.gameIds[i % 2]!,
      wagerMicros: 250_000 + i,
      payoutMicros: i % 3 === 0 ? 500_000 : 0,
      createdAt: new Date(Date.UTC(2026, 4, 20, 6, i)),
    }));
    await world.addSpins(rows);
    const body = { reportDate: "2026-05-20", environment: "sandbox" };
    const answers = await Promise.all([
      operatorGenerate(api, world.partnerId, body),
      operatorGenerate(api, world.partnerId, body),
      operatorGenerate(api, world.partnerId, body),
    ]);
    expect(answers.map((answer) => answer.status)).toEqual([201, 201, 201]);
    expect(new Set(answers.map((answer) => answer.body.totalSpins))).toEqual(new Set([50]));
    const reports = await api.database.db
      .select()
      .from(settlementReports)
      .where(eq(settlementReports.partnerId, world.partnerId));
    expect(reports).toHaveLength(1);
    expect(await reportEvents(world.partnerId)).toHaveLength(1);
  });

  it("never changes an acknowledged or disputed report (409 KS-4304)", async () => {
    const world = await settlementWorld(api, "sandbox", 1);
    const gameId = world.fixture.gameIds[0]!;
    const spin = (hour: number) => ({
      gameId,
      wagerMicros: 1_000_000,
      payoutMicros: 0,
      createdAt: new Date(Date.UTC(2026, 5, 1, hour)),
    });
    await world.addSpins([spin(1)]);
    await operatorGenerate(api, world.partnerId, { reportDate: "2026-06-01", environment: "sandbox" });
    const ack = await api.request("/api/partner/v1/settlements/2026-06-01/acknowledge", {
      method: "POST",
      apiKey: world.apiKey,
    });
    expect(ack.body.status).toBe("acknowledged");
    await world.addSpins([spin(2)]);
    const refused = await operatorGenerate(api, world.partnerId, { reportDate: "2026-06-01", environment: "sandbox" });
    expect([refused.status, refused.body.errorCode]).toEqual([409, "KS-4304"]);
    const after = await api.request("/api/partner/v1/settlements/2026-06-01", { apiKey: world.apiKey });
    expect(after.body).toEqual(ack.body);
  });
});

describe("operator generation: errors", () => {
  it("answers KS-4209, KS-4214, KS-4105, KS-4102 and KS-4101 exactly, creating nothing", async () => {
    const world = await settlementWorld(api, "sandbox", 1);
    const unknown = await operatorGenerate(api, "ptr_doesnotexist", {
      reportDate: "2026-01-01",
      environment: "sandbox",
    });
    expect([unknown.status, unknown.body.errorCode]).toEqual([404, "KS-4209"]);
    const noGames = await operatorGenerate(api, world.partnerId, {
      reportDate: "2026-01-01",
      environment: "production",
    });
    expect([noGames.status, noGames.body.errorCode]).toEqual([404, "KS-4214"]);
    const future = new Date(Date.now() + 2 * 24 * 3600 * 1000).toISOString().slice(0, 10);
    for (const reportDate of ["2026-02-30", "2026-1-01", "01/02/2026", 20260101, future]) {
      const bad = await operatorGenerate(api, world.partnerId, { reportDate, environment: "sandbox" });
      expect([bad.status, bad.body.errorCode], String(reportDate)).toEqual([400, "KS-4105"]);
    }
    const missing = await operatorGenerate(api, world.partnerId, { environment: "sandbox" });
    expect([missing.status, missing.body.errorCode]).toEqual([400, "KS-4102"]);
    const badEnv = await operatorGenerate(api, world.partnerId, { reportDate: "2026-01-01", environment: "live" });
    expect([badEnv.status, badEnv.body.errorCode]).toEqual([400, "KS-4101"]);
    const rows = await api.database.db
      .select()
      .from(settlementReports)
      .where(eq(settlementReports.partnerId, world.partnerId));
    expect(rows).toEqual([]);
  });

  it("accepts today (figures so far) and refuses requests without the operator token", async () => {
    const world = await settlementWorld(api, "sandbox", 1);
    const today = new Date().toISOString().slice(0, 10);
    const ok = await operatorGenerate(api, world.partnerId, { reportDate: today, environment: "sandbox" });
    expect([ok.status, ok.body.provisional]).toEqual([201, true]);
    const anonymous = await api.request(`/api/admin/v1/partners/${world.partnerId}/settlements`, {
      method: "POST",
      json: { reportDate: today, environment: "sandbox" },
    });
    expect([anonymous.status, anonymous.body.errorCode]).toEqual([401, "KS-4001"]);
  });
});

describe("operator reissue", () => {
  it("recomputes a disputed report, makes it PENDING and announces it; the partner can then acknowledge", async () => {
    const world = await settlementWorld(api, "production", 1);
    const gameId = world.fixture.gameIds[0]!;
    const base = { gameId, payoutMicros: 0 };
    await world.addSpins([{ ...base, wagerMicros: 3_000_000, createdAt: at("2026-07-04T08:00:00Z") }]);
    await operatorGenerate(api, world.partnerId, { reportDate: "2026-07-04", environment: "production" });

    const notDisputed = await operatorReissue(api, world.partnerId, "2026-07-04", { environment: "production" });
    expect([notDisputed.status, notDisputed.body.errorCode]).toEqual([409, "KS-4304"]);

    const disputed = await api.request("/api/partner/v1/settlements/2026-07-04/dispute", {
      method: "POST",
      apiKey: world.apiKey,
      json: { reason: "A late spin is missing" },
    });
    expect(disputed.body.status).toBe("disputed");
    // The missing spin lands (e.g. a late import); the reissue must count it.
    await world.addSpins([{ ...base, wagerMicros: 1_000_000, createdAt: at("2026-07-04T23:00:00Z") }]);
    const reissued = await operatorReissue(api, world.partnerId, "2026-07-04", { environment: "production" });
    expect(reissued.status).toBe(200);
    expect(reissued.body).toMatchObject({
      status: "PENDING",
      totalSpins: 2,
      totalWageredUsd: 4,
      disputeReason: "A late spin is missing",
    });
    const announced = await reportEvents(world.partnerId);
    expect(announced.map((event) => event.data.status)).toEqual(expect.arrayContaining(["GENERATED", "PENDING"]));
    expect(announced.find((event) => event.data.status === "PENDING")?.data.totalSpins).toBe(2);

    const again = await operatorReissue(api, world.partnerId, "2026-07-04", { environment: "production" });
    expect([again.status, again.body.errorCode]).toEqual([409, "KS-4304"]);
    const ack = await api.request("/api/partner/v1/settlements/2026-07-04/acknowledge", {
      method: "POST",
      apiKey: world.apiKey,
    });
    expect(ack.body.status).toBe("acknowledged");
  });

  it("answers KS-4301 for an unknown report, KS-4105 for a bad date, KS-4209 for an unknown partner", async () => {
    const world = await settlementWorld(api, "sandbox", 1);
    const unknown = await operatorReissue(api, world.partnerId, "2026-07-05", { environment: "sandbox" });
    expect([unknown.status, unknown.body.errorCode]).toEqual([404, "KS-4301"]);
    const badDate = await operatorReissue(api, world.partnerId, "2026-07-32", {});
    expect([badDate.status, badDate.body.errorCode]).toEqual([400, "KS-4105"]);
    const noPartner = await operatorReissue(api, "ptr_nobody", "2026-07-05", { environment: "sandbox" });
    expect([noPartner.status, noPartner.body.errorCode]).toEqual([404, "KS-4209"]);
    const noEnv = await operatorReissue(api, world.partnerId, "2026-07-05", {});
    expect([noEnv.status, noEnv.body.errorCode]).toEqual([400, "KS-4102"]);
  });
});

describe("POST /jobs/settlements/run", () => {
  it("queues settlement.generate and answers 202 with its id", async () => {
    const queued = await api.request("/api/admin/v1/jobs/settlements/run", {
      method: "POST",
      json: { reportDate: "2026-03-01" },
      admin: true,
    });
    expect(queued.status).toBe(202);
    const job = await api.deps.producers.queues.settlements.getJob(queued.body.jobId);
    expect([job?.name, job?.data]).toEqual(["settlement.generate", { reportDate: "2026-03-01" }]);

    const bare = await api.request("/api/admin/v1/jobs/settlements/run", { method: "POST", admin: true });
    expect(bare.status).toBe(202);
    expect((await api.deps.producers.queues.settlements.getJob(bare.body.jobId))?.data).toEqual({});

    const bad = await api.request("/api/admin/v1/jobs/settlements/run", {
      method: "POST",
      json: { reportDate: "2026-02-29" },
      admin: true,
    });
    expect([bad.status, bad.body.errorCode]).toEqual([400, "KS-4105"]);
  });
});
