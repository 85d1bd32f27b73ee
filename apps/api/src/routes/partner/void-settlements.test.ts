import { generateSettlementReport, players, spins } from "@outcomes/db";
import { testApiForFile } from "@outcomes/testkit/file-fixture";
import {
  operatorGenerate,
  operatorReissue,
  type SettlementWorld,
  settlementWorld,
} from "@outcomes/testkit/settlements";
import { and, eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";

/**
 * Voids in settlement (CONTRACT §13): a report counts the spins created that UTC day and the voids
 * made that day, of spins of any day; a report already generated never changes.
 */
const api = testApiForFile();
let world: SettlementWorld;
beforeAll(async () => {
  world = await settlementWorld(api, "sandbox", 2);
});

const DAY_MS = 86_400_000;
const utcDay = (daysAgo: number) => new Date(Date.now() - daysAgo * DAY_MS).toISOString().slice(0, 10);

describe("a void of yesterday's spin", () => {
  it("shows in today's report, not in yesterday's, which stays as generated", async () => {
    const yesterday = utcDay(1);
    const today = utcDay(0);
    const [first, second] = world.fixture.gameIds as [number, number];
    const startOfToday = Date.parse(`${today}T00:00:00.000Z`);
    await world.addSpins([
      {
        gameId: first,
        wagerMicros: 2_000_000,
        payoutMicros: 10_000_000,
        createdAt: new Date(`${yesterday}T12:00:00Z`),
      },
      { gameId: second, wagerMicros: 3_000_000, payoutMicros: 0, createdAt: new Date(`${yesterday}T13:00:00Z`) },
      {
        gameId: first,
        wagerMicros: 1_000_000,
        payoutMicros: 0,
        createdAt: new Date(Math.max(startOfToday, Date.now() - 1_000)),
      },
    ]);
    // The fixture's player holds what its spins did, as the spin path would have left it.
    await api.database.db
      .update(players)
      .set({ balanceMicros: 4_000_000, totalSpins: 3, totalWageredMicros: 6_000_000, totalPaidMicros: 10_000_000 })
      .where(eq(players.id, world.fixture.playerId));
    const generated = await operatorGenerate(api, world.partnerId, { reportDate: yesterday, environment: "sandbox" });
    expect(generated.status).toBe(201);
    expect(generated.body).toMatchObject({
      totalSpins: 2,
      totalWageredUsd: 5,
      totalPaidUsd: 10,
      voidedSpins: 0,
      voidedWageredUsd: 0,
      voidedPaidUsd: 0,
      netUsd: -5,
    });

    const listing = await api.request(`/api/partner/v1/settlements/${yesterday}`, { apiKey: world.apiKey });
    const [won] = await api.database.db
      .select({ spinId: spins.id })
      .from(spins)
      .where(and(eq(spins.partnerId, world.partnerId), eq(spins.payoutMicros, 10_000_000)));
    const voided = await api.request(`/api/partner/v1/spins/${won!.spinId}/void`, {
      method: "POST",
      apiKey: world.apiKey,
      json: { reason: "wallet refused the debit" },
    });
    expect(voided.status).toBe(200);

    // Yesterday's report: unchanged, by a run as by a read.
    const again = await operatorGenerate(api, world.partnerId, { reportDate: yesterday, environment: "sandbox" });
    expect(again.body).toEqual(generated.body);
    expect((await api.request(`/api/partner/v1/settlements/${yesterday}`, { apiKey: world.apiKey })).body).toEqual(
      listing.body,
    );

    const current = await operatorGenerate(api, world.partnerId, { reportDate: today, environment: "sandbox" });
    const expected = {
      totalSpins: 1,
      totalWageredUsd: 1,
      totalPaidUsd: 0,
      voidedSpins: 1,
      voidedWageredUsd: 2,
      voidedPaidUsd: 10,
      freeRoundSpins: 0,
      freeRoundWagerUsd: 0,
      // (1 − 2) − (0 − 10): the void gives the partner its 10 USD payout back and the player's 2 USD wager.
      netUsd: 9,
      rtp: 0,
    };
    expect(current.body).toMatchObject(expected);
    const exact = (amounts: Partial<Record<string, string>>) => ({
      exact: {
        totalWageredUsd: "0",
        totalPaidUsd: "0",
        voidedWageredUsd: "0",
        voidedPaidUsd: "0",
        freeRoundWagerUsd: "0",
        netUsd: "0",
        ...amounts,
      },
      figuresExact: true,
    });
    expect(current.body.games).toEqual([
      {
        gameId: first,
        ...expected,
        ...exact({ totalWageredUsd: "1", voidedWageredUsd: "2", voidedPaidUsd: "10", netUsd: "9" }),
      },
      {
        gameId: second,
        totalSpins: 0,
        totalWageredUsd: 0,
        totalPaidUsd: 0,
        voidedSpins: 0,
        voidedWageredUsd: 0,
        voidedPaidUsd: 0,
        freeRoundSpins: 0,
        freeRoundWagerUsd: 0,
        netUsd: 0,
        rtp: null,
        ...exact({}),
      },
    ]);
    const events = (await api.request("/api/partner/v1/events?type=settlement.report_ready", { apiKey: world.apiKey }))
      .body.events;
    expect(events.at(-1).data).toMatchObject({ reportDate: today, voidedSpins: 1, netUsd: 9 });

    // Once today has ended a run makes its report final (the clock driven past midnight), and a
    // reissue after a dispute goes back to the record (spins and voids) and finds the same figures.
    const key = { partnerId: world.partnerId, environment: "sandbox" as const, reportDate: today };
    const final = await generateSettlementReport(api.database.db, key, "refuse", {
      now: new Date(startOfToday + DAY_MS),
    });
    expect([final.outcome, final.report.provisional]).toEqual(["updated", false]);
    const disputed = await api.request(`/api/partner/v1/settlements/${today}/dispute`, {
      method: "POST",
      apiKey: world.apiKey,
      json: { reason: "checking the voids" },
    });
    expect(disputed.status).toBe(200);
    const reissued = await operatorReissue(api, world.partnerId, today, { environment: "sandbox" });
    expect(reissued.body).toMatchObject({ status: "PENDING", ...expected });
  });
});
