import { utcDayBounds } from "@outcomes/core";
import { type Database, ensurePartitions, events, generateSettlementReport, settlementReports } from "@outcomes/db";
import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import { registerTestGame } from "@outcomes/testkit/games";
import { operatorGenerate, settlementWorld } from "@outcomes/testkit/settlements";
import { insertFixtureSpins } from "@outcomes/testkit/spin-rows";
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runSettlements } from "./run.js";

/**
 * Issue 37, defect 1 (CONTRACT §8): a report of a UTC day that has not ended is provisional; it can
 * be read and regenerated, acknowledge and dispute answer 409 KS-4305, and a run after the day has
 * ended makes it final with every spin of the day. The clock is driven as the settlement tests do:
 * the run is given the moment it stands for (`now`), one second past midnight; spins, transactions
 * and snapshots stay real.
 */
let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({ BLOCK_SIZE: "50", MIN_READY_BLOCKS: "1", TARGET_READY_BLOCKS: "1" });
});
afterAll(async () => {
  await api?.close();
});

const today = new Date().toISOString().slice(0, 10);
const dayEnd = utcDayBounds(today).end;
const afterMidnight = { now: new Date(dayEnd.getTime() + 1_000) };
const silent = { progress: async () => {}, log: async () => {} };

/** The scheduled job's run of `today` for one partner, at `clock`. */
function runToday(testApi: TestApi, partnerId: string, clock: { now?: Date } = {}) {
  const payload = { reportDate: today, partnerId };
  return runSettlements(testApi.database.db, payload, new Date(), silent, testApi.deps.logger, clock);
}

const report = (testApi: TestApi, apiKey: string) =>
  testApi.request(`/api/partner/v1/settlements/${today}`, { apiKey });
const settle = (testApi: TestApi, apiKey: string, action: "acknowledge" | "dispute") =>
  testApi.request(`/api/partner/v1/settlements/${today}/${action}`, {
    method: "POST",
    apiKey,
    ...(action === "dispute" ? { json: { reason: "Totals differ" } } : {}),
  });

describe("today's report is provisional until a run after the day ends", () => {
  it("refuses acknowledge and dispute with KS-4305, then a run after midnight makes it final with every spin", async () => {
    const game = await registerTestGame(api);
    const spin = (wagerUsd: number) =>
      api.request("/api/partner/v1/spins", {
        method: "POST",
        apiKey: game.apiKey,
        json: { gameId: game.gameId, playerId: "player-1", wagerUsd },
      });
    for (const wagerUsd of [1, 1]) expect((await spin(wagerUsd)).status).toBe(200);

    const generated = await operatorGenerate(api, game.partnerId, { reportDate: today, environment: "sandbox" });
    expect(generated.body).toMatchObject({ status: "GENERATED", provisional: true, totalSpins: 2 });
    for (const action of ["acknowledge", "dispute"] as const) {
      const refused = await settle(api, game.apiKey, action);
      expect([refused.status, refused.body.errorCode]).toEqual([409, "KS-4305"]);
      expect(refused.body.message).toBe(
        `Report is provisional until its day ends at ${dayEnd.toISOString()}; the first settlement run after that makes it final`,
      );
    }
    expect((await report(api, game.apiKey)).body).toEqual(generated.body);

    // The day goes on: a later spin, and a run before midnight refreshes the provisional figures.
    expect((await spin(3)).status).toBe(200);
    expect(await runToday(api, game.partnerId)).toMatchObject({ updated: 1, failed: 0 });
    expect((await report(api, game.apiKey)).body).toMatchObject({ provisional: true, totalSpins: 3 });

    // Past midnight the run makes it final with every spin of the day; then the partner can settle it.
    expect(await runToday(api, game.partnerId, afterMidnight)).toMatchObject({ updated: 1, failed: 0 });
    const final = await report(api, game.apiKey);
    expect(final.body).toMatchObject({
      status: "GENERATED",
      provisional: false,
      totalSpins: 3,
      totalWageredUsd: 5,
      generatedAt: afterMidnight.now.toISOString(),
    });
    const announced = await api.database.db
      .select()
      .from(events)
      .where(and(eq(events.partnerId, game.partnerId), eq(events.type, "settlement.report_ready")));
    expect(announced.map((event) => (event.payload as any).data.provisional)).toEqual([true, true, false]);
    const acknowledged = await settle(api, game.apiKey, "acknowledge");
    expect([acknowledged.status, acknowledged.body.status]).toEqual([200, "acknowledged"]);
    // A final acknowledged report: every later run leaves it alone.
    expect(await runToday(api, game.partnerId, afterMidnight)).toMatchObject({ skipped: 1, failed: 0 });
  });

  it("stays provisional while a transaction begun before midnight can still add a spin of the day", async () => {
    const world = await settlementWorld(api, "sandbox", 1);
    const spinNow = () => ({
      gameId: world.fixture.gameIds[0]!,
      wagerMicros: 1_000_000,
      payoutMicros: 0,
      createdAt: new Date(),
    });
    await world.addSpins([spinNow()]);
    let commit!: () => void;
    const held = new Promise<void>((resolve) => {
      commit = resolve;
    });
    let inserted!: () => void;
    const insertedSpin = new Promise<void>((resolve) => {
      inserted = resolve;
    });
    // A spin dated before midnight whose transaction has not committed when the run looks.
    const open = api.database.db.transaction(async (tx) => {
      await insertFixtureSpins(tx as unknown as Database, world.fixture, [spinNow()]);
      inserted();
      await held;
    });
    await insertedSpin;
    await expect(runToday(api, world.partnerId, afterMidnight)).rejects.toThrow(/1 of 1 settlement report\(s\)/);
    const [waiting] = await api.database.db
      .select()
      .from(settlementReports)
      .where(eq(settlementReports.partnerId, world.partnerId));
    expect([waiting?.provisional, waiting?.totalSpins]).toEqual([true, 1]);

    commit();
    await open;
    expect(await runToday(api, world.partnerId, afterMidnight)).toMatchObject({ updated: 1, failed: 0 });
    expect((await report(api, world.apiKey)).body).toMatchObject({ provisional: false, totalSpins: 2 });
  });
});

describe("a report still provisional after its day (held back, or settled by release 2's worker)", () => {
  it("is made final by the next run, whatever day that run settles", async () => {
    const world = await settlementWorld(api, "sandbox", 1);
    const earlier = new Date(Date.now() - 3 * 86_400_000).toISOString().slice(0, 10);
    const spin = { gameId: world.fixture.gameIds[0]!, wagerMicros: 1_000_000, payoutMicros: 0 };
    await world.addSpins([{ ...spin, createdAt: new Date(`${earlier}T10:00:00.000Z`) }]);
    const key = { partnerId: world.partnerId, environment: "sandbox" as const, reportDate: earlier };
    // Its `settlement.report_ready` is dated that day: on the first days of a month, in the previous
    // month's events partition, which the database (made from 25 h back) may not have yet.
    await ensurePartitions(api.database.db, "events", { from: new Date(`${earlier}T00:00:00.000Z`), to: new Date() });
    // Generated during its day; a spin lands after that, and the day's own run never came.
    await generateSettlementReport(api.database.db, key, "skip", { now: new Date(`${earlier}T12:00:00.000Z`) });
    await world.addSpins([{ ...spin, createdAt: new Date(`${earlier}T20:00:00.000Z`) }]);

    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    const payload = { reportDate: yesterday, partnerId: world.partnerId };
    const run = await runSettlements(api.database.db, payload, new Date(), silent, api.deps.logger);
    expect(run).toMatchObject({ reportDate: yesterday, total: 2, created: 1, updated: 1, failed: 0 });
    const final = await api.request(`/api/partner/v1/settlements/${earlier}`, { apiKey: world.apiKey });
    expect(final.body).toMatchObject({ provisional: false, totalSpins: 2 });
  });
});

describe("before release finish (release 2 still runs beside this release)", () => {
  let running: TestApi;
  beforeAll(async () => {
    running = await startTestApi({}, { rollout: "running" });
  });
  afterAll(async () => {
    await running?.close();
  });

  async function acknowledgedWhileProvisional() {
    const world = await settlementWorld(running, "sandbox", 1);
    const spin = { gameId: world.fixture.gameIds[0]!, wagerMicros: 2_000_000, payoutMicros: 0 };
    await world.addSpins([{ ...spin, createdAt: new Date() }]);
    await operatorGenerate(running, world.partnerId, { reportDate: today, environment: "sandbox" });
    // As release 2 answers: a provisional report can be acknowledged.
    const acknowledged = await settle(running, world.apiKey, "acknowledge");
    expect(acknowledged.body).toMatchObject({ status: "acknowledged", provisional: true, totalSpins: 1 });
    return { world, spin };
  }

  it("accepts acknowledging a provisional report; the final run keeps it when its figures did not change", async () => {
    const { world } = await acknowledgedWhileProvisional();
    const key = { partnerId: world.partnerId, environment: "sandbox" as const, reportDate: today };
    const final = await generateSettlementReport(running.database.db, key, "skip", afterMidnight);
    expect([final.outcome, final.report.status, final.report.provisional]).toEqual(["updated", "acknowledged", false]);
  });

  it("reopens an acknowledged provisional report whose final figures differ, also one release 2 stored", async () => {
    const { world, spin } = await acknowledgedWhileProvisional();
    // As release 2 stores its reports: no provisional flag (derived from generatedAt, before midnight).
    await running.database.db
      .update(settlementReports)
      .set({ provisional: null })
      .where(eq(settlementReports.partnerId, world.partnerId));
    expect((await report(running, world.apiKey)).body.provisional).toBe(true);
    await world.addSpins([{ ...spin, createdAt: new Date() }]);

    const key = { partnerId: world.partnerId, environment: "sandbox" as const, reportDate: today };
    const final = await generateSettlementReport(running.database.db, key, "skip", afterMidnight);
    expect(final.outcome).toBe("updated");
    expect((await report(running, world.apiKey)).body).toMatchObject({
      status: "GENERATED",
      provisional: false,
      acknowledgedAt: null,
      totalSpins: 2,
      totalWageredUsd: 4,
    });
  });
});
