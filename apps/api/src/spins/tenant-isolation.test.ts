import { players } from "@outcomes/db";
import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import { operatorGenerate } from "@outcomes/testkit/settlements";
import { addBlock, createGame, type FixtureGame, type OutcomeSpec, spin } from "@outcomes/testkit/spin-path";
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * CONTRACT §9, isolation and exact figures: a sandbox partner that floods forced top-tier spins at
 * the largest wager (each pays 9,000,000 × 1000 = 9e9 USD) shares the group commit with another
 * partner's production spins. Its player passes 2^53 − 1 micro-USD on the second such spin: that
 * spin, and every later one, is refused alone with KS-4103, while the batches it joined commit the
 * other partner's spins.
 */
let api: TestApi;
let flooder: { partnerId: string; apiKey: string };
let bystander: { partnerId: string; apiKey: string };
let floodGame: FixtureGame;
let bystanderGame: FixtureGame;
let productionSpins = 0;

/** The other partner's queue: enough for its clients to spin for as long as the flood lasts. */
const BYSTANDER_OUTCOMES = 6_000;
/**
 * Every refused spin shares batches with the other partner's: without the split, each would fail
 * them (and without the bound, ~1,025 such spins took the player past the bigint range, with the same
 * effect: 23 of 727 production spins answered 500 KS-5003).
 */
const FLOOD_SPINS = 400;
const SMALL_WINS = 100;

beforeAll(async () => {
  api = await startTestApi();
  flooder = await api.createPartner({ environment: "sandbox" });
  bystander = await api.createPartner({ environment: "production" });
  floodGame = await createGame(api, flooder.partnerId, { maxWagerUsd: 9_000_000 });
  bystanderGame = await createGame(api, bystander.partnerId, { environment: "production", maxWagerUsd: 100 });
  const outcomes: OutcomeSpec[] = Array.from({ length: BYSTANDER_OUTCOMES }, (_, i) =>
    i % 3 === 0 ? ["T1", "2"] : ["T0", 0],
  );
  await addBlock(api, bystanderGame.gameId, outcomes);
});
afterAll(async () => {
  await api.close();
});

/** Sends requests over `clients` concurrent loops while `more(sent)` holds; answers in order of completion. */
async function concurrently<T>(
  more: (sent: number) => boolean,
  clients: number,
  send: (i: number) => Promise<T>,
): Promise<T[]> {
  const answers: T[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (more(next)) answers.push(await send(next++));
    }),
  );
  return answers;
}

const statusesOf = (answers: { status: number; body: any }[]) => {
  const counts: Record<string, number> = {};
  for (const { status, body } of answers) {
    const key = `${status} ${body?.errorCode ?? ""}`.trim();
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
};

describe("one partner's extreme figures never fail another partner's spins", { timeout: 120_000 }, () => {
  it("refuses the flood alone with KS-4103 while every production spin of the other partner answers 200", async () => {
    let flooding = true;
    const floodDone = Promise.all([
      concurrently(
        (sent) => sent < FLOOD_SPINS,
        16,
        () =>
          spin(api, flooder.apiKey, {
            gameId: floodGame.gameId,
            playerId: "whale",
            wagerUsd: 9_000_000,
            forceTier: "T6",
          }),
      ),
      concurrently(
        (sent) => sent < SMALL_WINS,
        4,
        (i) =>
          spin(api, flooder.apiKey, {
            gameId: floodGame.gameId,
            playerId: `minnow-${i % 10}`,
            wagerUsd: 1,
            forceTier: "T6",
          }),
      ),
    ]).finally(() => {
      flooding = false;
    });
    const [[flood, small], production] = await Promise.all([
      floodDone,
      concurrently(
        (sent) => flooding && sent < BYSTANDER_OUTCOMES,
        8,
        (i) => spin(api, bystander.apiKey, { gameId: bystanderGame.gameId, playerId: `player-${i % 20}`, wagerUsd: 1 }),
      ),
    ]);
    productionSpins = production.length;

    expect(production.length).toBeLessThan(BYSTANDER_OUTCOMES);
    expect(statusesOf(production)).toEqual({ 200: production.length });
    expect(statusesOf(small)).toEqual({ 200: SMALL_WINS });
    // 9e15 micro-USD paid is within 2^53 − 1 (≈ 9.007e15); a second such payout is not.
    expect(statusesOf(flood)).toEqual({ 200: 1, "400 KS-4103": FLOOD_SPINS - 1 });
    const refused = flood.find(({ status }) => status === 400)!;
    expect(refused.body.message).toMatch(
      /player.s (balanceUsd outside -9007199254\.740991\.\.9007199254\.740991|totalPaidUsd past 9007199254\.740991) USD/,
    );

    // Nothing of a refused spin was written: the whale shows exactly its one spin.
    const [whale] = await api.database.db
      .select()
      .from(players)
      .where(and(eq(players.partnerId, flooder.partnerId), eq(players.externalId, "whale")));
    expect(whale).toMatchObject({
      totalSpins: 1,
      totalWageredMicros: 9_000_000_000_000,
      totalPaidMicros: 9_000_000_000_000_000,
      balanceMicros: 8_991_000_000_000_000,
    });
    const shown = await api.request("/api/partner/v1/players/whale", { apiKey: flooder.apiKey });
    expect(shown.body).toMatchObject({ totalSpins: 1, totalPaidUsd: 9_000_000_000, balanceUsd: 8_991_000_000 });
  });

  it("generates both partners' reports of the day afterwards", async () => {
    const reportDate = new Date().toISOString().slice(0, 10);
    const flooded = await operatorGenerate(api, flooder.partnerId, { reportDate, environment: "sandbox" });
    const bystanders = await operatorGenerate(api, bystander.partnerId, { reportDate, environment: "production" });
    expect([flooded.status, bystanders.status]).toEqual([201, 201]);
    expect(flooded.body).toMatchObject({ totalSpins: 1 + SMALL_WINS, totalPaidUsd: 9_000_000_000 + SMALL_WINS * 1000 });
    expect(bystanders.body).toMatchObject({ totalSpins: productionSpins, totalWageredUsd: productionSpins });
  });
});
