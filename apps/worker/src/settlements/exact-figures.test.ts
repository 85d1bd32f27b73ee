import { parseScaledDecimal, SAMPLE_PAR_SHEET } from "@outcomes/core";
import { events } from "@outcomes/db";
import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import { registerTestGame, type TestGame } from "@outcomes/testkit/games";
import { operatorGenerate, usdText } from "@outcomes/testkit/settlements";
import { eventually, startRole } from "@outcomes/testkit/workers";
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSettlementsRole } from "./index.js";
import type { SettlementRunProgress } from "./run.js";

/**
 * Issue 33: a partner-day past 2^53 − 1 micro-USD is reported, exactly, by the operator API and by
 * the scheduled job, and another partner's report of the day is what it always was. Reproduced as
 * the issue did: a production partner's approved sheet whose only win pays 0.000001×, a game with
 * maxWagerUsd 9,007,199,254.74 (its operator raised the spin ceiling), and two real spins of
 * 9,007,199,254.74 and 5,000,000,000 USD.
 */
let api: TestApi;
let worker: Awaited<ReturnType<typeof startRole>>;
let whale: TestGame;
let bystander: TestGame;
const today = new Date().toISOString().slice(0, 10);
const spun = { whale: [] as SpinAnswer[], bystander: [] as SpinAnswer[] };

interface SpinAnswer {
  wagerUsd: number;
  outcome: { payoutUsd: number };
}

const TINY_WIN_SHEET = {
  ...SAMPLE_PAR_SHEET,
  name: "Tiny win",
  prizeTiers: [
    { tier: "T0", multiplier: 0, weight: 1 },
    { tier: "T1", multiplier: 0.000001, weight: 1 },
  ],
  combinations: [{ ...SAMPLE_PAR_SHEET.combinations.find((combination) => combination.tier === "T6")!, tier: "T1" }],
  certifiedRtp: 0.0000005,
};

async function spin(game: TestGame, playerId: string, wagerUsd: number): Promise<SpinAnswer> {
  const response = await api.request("/api/partner/v1/spins", {
    method: "POST",
    apiKey: game.apiKey,
    json: { gameId: game.gameId, playerId, wagerUsd },
  });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body;
}

beforeAll(async () => {
  api = await startTestApi({ BLOCK_SIZE: "20", MIN_READY_BLOCKS: "1", TARGET_READY_BLOCKS: "1" });
  worker = await startRole(api, startSettlementsRole);
  const whalePartner = await api.createPartner({ environment: "production" });
  const raised = await api.request(`/api/admin/v1/partners/${whalePartner.partnerId}`, {
    method: "PATCH",
    admin: true,
    json: { spinCeilingUsd: 9_007_199_254.74 },
  });
  expect(raised.status).toBe(200);
  whale = await registerTestGame(api, {
    partner: whalePartner,
    sheet: TINY_WIN_SHEET,
    game: { maxWagerUsd: 9_007_199_254.74 },
  });
  spun.whale.push(await spin(whale, "whale-1", 9_007_199_254.74), await spin(whale, "whale-2", 5_000_000_000));
  bystander = await registerTestGame(api, { partner: await api.createPartner({ environment: "production" }) });
  spun.bystander.push(await spin(bystander, "player-1", 1.25), await spin(bystander, "player-2", 2.5));
});
afterAll(async () => {
  await worker?.close();
  await api?.close();
});

const micros = (usd: number) => parseScaledDecimal(String(usd))!;
/** The day's exact figures, summed in the test from the spins' own answers. */
function expectedOf(answers: SpinAnswer[]) {
  const wagered = answers.reduce((sum, answer) => sum + micros(answer.wagerUsd), 0n);
  const paid = answers.reduce((sum, answer) => sum + micros(answer.outcome.payoutUsd), 0n);
  return {
    totalSpins: answers.length,
    exact: {
      totalWageredUsd: usdText(wagered),
      totalPaidUsd: usdText(paid),
      voidedWageredUsd: "0",
      voidedPaidUsd: "0",
      freeRoundWagerUsd: "0",
      netUsd: usdText(wagered - paid),
    },
  };
}

async function readyEvents(partnerId: string) {
  const rows = await api.database.db
    .select()
    .from(events)
    .where(and(eq(events.partnerId, partnerId), eq(events.type, "settlement.report_ready")));
  return rows.map((row) => (row.payload as { data: Record<string, unknown> }).data);
}

describe("a partner-day past 2^53 − 1 micro-USD (issue 33)", () => {
  it("is reported exactly by the scheduled job, which finishes; the other partner's report is unaffected", async () => {
    const queued = await api.deps.producers.add("settlement.generate", { reportDate: today });
    const summary = await eventually(async () => {
      const job = await api.deps.producers.queues.settlements.getJob(queued.id!);
      if (job?.failedReason) throw new Error(job.failedReason);
      return job?.finishedOn ? (job.returnvalue as SettlementRunProgress) : undefined;
    });
    expect(summary).toMatchObject({ reportDate: today, failed: 0, created: 2 });

    const whaleReport = await api.request(`/api/partner/v1/settlements/${today}`, { apiKey: whale.apiKey });
    const expected = expectedOf(spun.whale);
    expect(expected.exact.totalWageredUsd).toBe("14007199254.74");
    expect(whaleReport.body).toMatchObject({ ...expected, figuresExact: false, provisional: true });
    // The numbers stay numbers (typed clients keep working): the nearest doubles of the exact amounts.
    expect(whaleReport.body.totalWageredUsd).toBe(Number(expected.exact.totalWageredUsd));
    expect(whaleReport.body.games).toEqual([
      expect.objectContaining({ gameId: whale.gameId, ...expected, figuresExact: false }),
    ]);
    const [announced] = await readyEvents(whale.partnerId);
    expect(announced).toMatchObject({ reportDate: today, ...expected, figuresExact: false, provisional: true });

    const other = await api.request(`/api/partner/v1/settlements/${today}`, { apiKey: bystander.apiKey });
    expect(other.body).toMatchObject({
      ...expectedOf(spun.bystander),
      totalWageredUsd: 3.75,
      figuresExact: true,
    });
  });

  it("is reported exactly by the operator API (no more 500 KS-5009), for both partners", async () => {
    const generated = await operatorGenerate(api, whale.partnerId, { reportDate: today, environment: "production" });
    expect([generated.status, generated.body.errorCode]).toEqual([201, undefined]);
    expect(generated.body).toMatchObject({ ...expectedOf(spun.whale), figuresExact: false });
    const other = await operatorGenerate(api, bystander.partnerId, { reportDate: today, environment: "production" });
    expect([other.status, other.body]).toMatchObject([201, { ...expectedOf(spun.bystander), figuresExact: true }]);
  });
});
