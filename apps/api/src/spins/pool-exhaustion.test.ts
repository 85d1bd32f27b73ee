import { spins, sqlClientOf } from "@outcomes/db";
import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import { addBlock, createGame, type FixtureGame, type OutcomeSpec } from "@outcomes/testkit/spin-path";
import { eq } from "drizzle-orm";
import { afterEach, describe, expect, it } from "vitest";

/** The test API's pool has 10 connections; four times as many keyed clients arrive at once. */
const CLIENTS = 40;
const REQUEST_TIMEOUT_MS = 15_000;

let api: TestApi | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

async function gameWithOutcomes(testApi: TestApi, outcomes: number): Promise<FixtureGame & { apiKey: string }> {
  const { partnerId, apiKey } = await testApi.createPartner();
  const game = await createGame(testApi, partnerId, { maxWagerUsd: 1000 });
  await addBlock(
    testApi,
    game.gameId,
    Array.from({ length: outcomes }, (_, i): OutcomeSpec => (i % 3 === 0 ? ["T1", 2] : ["T0", 0])),
  );
  return { ...game, apiKey };
}

/** Every client sends one keyed spin at the same moment; each answer is awaited at most 15 s. */
async function keyedBurst(testApi: TestApi, game: FixtureGame & { apiKey: string }, round: string) {
  return Promise.all(
    Array.from({ length: CLIENTS }, (_, i) =>
      fetch(`${testApi.baseUrl}/api/partner/v1/spins`, {
        method: "POST",
        headers: { "X-API-Key": game.apiKey, "Content-Type": "application/json", "Idempotency-Key": `${round}-${i}` },
        body: JSON.stringify({ gameId: game.gameId, playerId: `player-${i % 7}`, wagerUsd: 1 }),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      }).then(
        async (response) => ({ status: response.status, body: (await response.json()) as { errorCode?: string } }),
        (error: Error) => ({ status: 0, body: { errorCode: error.name } }),
      ),
    ),
  );
}

describe("more concurrent keyed spins than pool connections", () => {
  it("answers every one of 40 keyed spins on a cold start (game and block caches empty)", async () => {
    api = await startTestApi();
    const game = await gameWithOutcomes(api, 200);
    const answers = await keyedBurst(api, game, "cold");
    expect(answers.map((answer) => answer.status)).toEqual(Array(CLIENTS).fill(200));
    const rows = await api.database.db.select({ id: spins.id }).from(spins).where(eq(spins.gameId, game.gameId));
    expect(rows).toHaveLength(CLIENTS);
  });

  it("answers every keyed spin again after the game cache expired, and /readyz stays green", async () => {
    api = await startTestApi();
    const game = await gameWithOutcomes(api, 200);
    expect((await keyedBurst(api, game, "first")).every((answer) => answer.status === 200)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 1100)); // past the game cache's 1 s
    const [answers, ready] = await Promise.all([
      keyedBurst(api, game, "second"),
      api.request("/readyz", { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) }),
    ]);
    expect(answers.map((answer) => answer.status)).toEqual(Array(CLIENTS).fill(200));
    expect(ready.status).toBe(200);
  });

  it("answers KS-5003 within the acquire timeout while every connection is held, then serves again", async () => {
    api = await startTestApi();
    const game = await gameWithOutcomes(api, 100);
    // The key and the game are cached by a first spin, so what is measured is the spin's own path.
    expect((await keyedBurst(api, game, "warm"))[0]?.status).toBe(200);
    // A future mistake of the same kind, simulated: every connection of the API's pool is taken by a
    // transaction that waits on something that will not come in time.
    const pool = sqlClientOf(api.deps.db);
    let release: () => void = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const holders = Array.from({ length: 10 }, () => pool.begin(async (tx) => Promise.all([tx`select 1`, released])));
    await new Promise((resolve) => setTimeout(resolve, 50));
    const started = Date.now();
    const stuck = await keyedBurst(api, game, "held");
    const waitedMs = Date.now() - started;
    // KS-5003 from the spin; KS-5004 where the key's 1-s cache had expired and its look-up timed out.
    for (const answer of stuck)
      expect(["500 KS-5003", "500 KS-5004"]).toContain(`${answer.status} ${answer.body.errorCode}`);
    expect(waitedMs).toBeLessThan(REQUEST_TIMEOUT_MS);
    release();
    await Promise.all(holders);
    const answers = await keyedBurst(api, game, "after");
    expect(answers.map((answer) => answer.status)).toEqual(Array(CLIENTS).fill(200));
  });
});
