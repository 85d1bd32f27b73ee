import { freeRoundPlayers, freeRoundSpins, players, spins } from "@outcomes/db";
import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import { operatorGenerate } from "@outcomes/testkit/settlements";
import {
  addBlock,
  asRead,
  createGame,
  type FixtureGame,
  issueKey,
  queueLength,
  spin,
  waitForLockWaiters,
} from "@outcomes/testkit/spin-path";
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";

/**
 * Spins with `freeRoundsId` over HTTP (CONTRACT §14): the round used with the spin, the balance moved
 * by the payout only, `freeRound` on results, every way a round is not available (KS-4218) with
 * nothing written, concurrent spins on two API processes never using more rounds than granted,
 * idempotency, voids giving the round back, and the day's settlement.
 */
let api: TestApi;
let other: TestApi;
let partner: { partnerId: string; apiKey: string };
let game: FixtureGame;
let secondGame: FixtureGame;

beforeAll(async () => {
  api = await startTestApi();
  other = await startTestApi({}, { shareWith: api });
  partner = await api.createPartner();
  secondGame = await createGame(api, partner.partnerId, { maxWagerUsd: 100 });
});
afterAll(async () => {
  await other?.close();
  await api?.close();
});

const P = "/api/partner/v1";
let players_ = 0;
const newPlayer = () => `fr-player-${++players_}`;

/** A grant made through the API; answers the grant. */
async function grant(input: {
  playerIds: string[];
  rounds: number;
  wagerUsd?: number;
  expiresAt?: string;
  gameId?: number;
  apiKey?: string;
}) {
  const response = await api.request(`${P}/free-rounds`, {
    method: "POST",
    apiKey: input.apiKey ?? partner.apiKey,
    json: {
      gameId: input.gameId ?? game.gameId,
      playerIds: input.playerIds,
      rounds: input.rounds,
      wagerUsd: input.wagerUsd ?? 2,
      expiresAt: input.expiresAt ?? new Date(Date.now() + 86_400_000).toISOString(),
    },
  });
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body as { freeRoundsId: string; wagerUsd: number };
}

const freeSpin = (json: Record<string, unknown>, idempotencyKey?: string, via = api) =>
  spin(via, partner.apiKey, { gameId: game.gameId, ...json }, idempotencyKey);

beforeEach(async () => {
  // Each test its own game, so its queue holds only the outcomes it added.
  game = await createGame(api, partner.partnerId, { maxWagerUsd: 100 });
});
const playerOf = async (playerId: string) =>
  (await api.request(`${P}/players/${playerId}`, { apiKey: partner.apiKey })).body;
const roundsOf = async (freeRoundsId: string, playerId: string) =>
  (await api.request(`${P}/free-rounds/${freeRoundsId}/players/${playerId}`, { apiKey: partner.apiKey })).body;

/** What the record holds for a player: spins and free-round spins written, to show a refusal wrote nothing. */
async function written(playerId: string) {
  const { db } = api.database;
  const spun = await db
    .select({ id: spins.id })
    .from(spins)
    .innerJoin(players, eq(players.id, spins.playerId))
    .where(eq(players.externalId, playerId));
  const free = await db.select().from(freeRoundSpins).where(eq(freeRoundSpins.externalPlayerId, playerId));
  return { spins: spun.length, freeRoundSpins: free.length };
}

async function roundsUsed(freeRoundsId: string, playerId: string): Promise<number> {
  const [row] = await api.database.db
    .select({ used: freeRoundPlayers.roundsUsed })
    .from(freeRoundPlayers)
    .where(and(eq(freeRoundPlayers.grantId, freeRoundsId), eq(freeRoundPlayers.externalPlayerId, playerId)));
  return row!.used;
}

describe("a free-round spin", () => {
  it("uses one round at the grant's wager, moves the balance by the payout only, and says what is left", async () => {
    const playerId = newPlayer();
    const { freeRoundsId } = await grant({ playerIds: [playerId], rounds: 3, wagerUsd: 2 });
    await addBlock(api, game.gameId, [
      ["T3", 10],
      ["T0", 0],
    ]);
    const first = await freeSpin({ playerId, freeRoundsId });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body).toMatchObject({
      wagerUsd: 2,
      outcome: { prizeTier: "T3", payoutUsd: 20 },
      balance: { balanceUsd: 20 },
      freeRound: { freeRoundsId, roundsLeft: 2 },
      voided: null,
    });
    // wagerUsd may be given when it is the grant's.
    const second = await freeSpin({ playerId, freeRoundsId, wagerUsd: 2.0 });
    expect(second.status, JSON.stringify(second.body)).toBe(200);
    expect(second.body).toMatchObject({ balance: { balanceUsd: 20 }, freeRound: { freeRoundsId, roundsLeft: 1 } });

    expect(await playerOf(playerId)).toMatchObject({
      balanceUsd: 20,
      totalSpins: 2,
      totalWageredUsd: 0,
      totalPaidUsd: 20,
    });
    expect(await roundsOf(freeRoundsId, playerId)).toEqual({
      freeRoundsId,
      playerId,
      rounds: 3,
      roundsUsed: 2,
      roundsLeft: 1,
      paidUsd: 20,
    });
    // Recall and the player's listing show the free round as answered; a paid spin shows null.
    const recalled = await api.request(`${P}/spins/${first.body.spinId}`, { apiKey: partner.apiKey });
    expect(recalled.body).toEqual(asRead(first.body));
    await addBlock(api, game.gameId, [["T0", 0]]);
    const paid = await freeSpin({ playerId, wagerUsd: 1 });
    expect(paid.body).toMatchObject({ freeRound: null, balance: { balanceUsd: 19 } });
    const listing = await api.request(`${P}/players/${playerId}/spins`, { apiKey: partner.apiKey });
    expect(listing.body.spins).toEqual([paid.body, second.body, first.body].map(asRead));
  });

  it("refuses a wagerUsd other than the grant's with 400 KS-4101, and spins without either with KS-4102", async () => {
    const playerId = newPlayer();
    const { freeRoundsId } = await grant({ playerIds: [playerId], rounds: 1, wagerUsd: 2 });
    const other = await freeSpin({ playerId, freeRoundsId, wagerUsd: 3 });
    expect([other.status, other.body.errorCode]).toEqual([400, "KS-4101"]);
    const none = await freeSpin({ playerId });
    expect([none.status, none.body.errorCode]).toEqual([400, "KS-4102"]);
    expect(await written(playerId)).toEqual({ spins: 0, freeRoundSpins: 0 });
    expect(await roundsUsed(freeRoundsId, playerId)).toBe(0);
  });
});

describe("a round that is not available: 409 KS-4218 saying which, nothing used or written", () => {
  async function refused(json: Record<string, unknown>, playerId: string, reason: RegExp) {
    const before = await queueLength(api, game.gameId);
    const response = await freeSpin({ playerId, ...json });
    expect([response.status, response.body.errorCode], JSON.stringify(response.body)).toEqual([409, "KS-4218"]);
    expect(response.body.message).toMatch(reason);
    // The outcome taken for it went back to the queue.
    expect(await queueLength(api, game.gameId)).toBe(before);
  }

  it("no round left", async () => {
    const playerId = newPlayer();
    const { freeRoundsId } = await grant({ playerIds: [playerId], rounds: 1 });
    await addBlock(api, game.gameId, [
      ["T0", 0],
      ["T0", 0],
    ]);
    expect((await freeSpin({ playerId, freeRoundsId })).status).toBe(200);
    await refused({ freeRoundsId }, playerId, /no round of this grant left/);
    expect(await written(playerId)).toEqual({ spins: 1, freeRoundSpins: 1 });
    expect(await playerOf(playerId)).toMatchObject({ totalSpins: 1, balanceUsd: 0 });
  });

  it("a player not in the grant, and a grant of another game", async () => {
    const playerId = newPlayer();
    const { freeRoundsId } = await grant({ playerIds: [newPlayer()], rounds: 5 });
    await addBlock(api, game.gameId, [["T0", 0]]);
    await refused({ freeRoundsId }, playerId, /player is not in the grant/);
    const elsewhere = await grant({ playerIds: [playerId], rounds: 5, gameId: secondGame.gameId });
    await refused({ freeRoundsId: elsewhere.freeRoundsId }, playerId, new RegExp(`for game ${secondGame.gameId}`));
    expect(await written(playerId)).toEqual({ spins: 0, freeRoundSpins: 0 });
    expect(await roundsUsed(elsewhere.freeRoundsId, playerId)).toBe(0);
  });

  it("a cancelled grant", async () => {
    const playerId = newPlayer();
    const { freeRoundsId } = await grant({ playerIds: [playerId], rounds: 5 });
    const cancel = await api.request(`${P}/free-rounds/${freeRoundsId}/cancel`, {
      method: "POST",
      apiKey: partner.apiKey,
    });
    expect(cancel.status).toBe(200);
    await addBlock(api, game.gameId, [["T0", 0]]);
    await refused({ freeRoundsId }, playerId, /cancelled/);
    expect(await written(playerId)).toEqual({ spins: 0, freeRoundSpins: 0 });
  });

  it("a spin held up behind the player's rounds while a cancel answers uses no round after it", async () => {
    const playerId = newPlayer();
    const { freeRoundsId } = await grant({ playerIds: [playerId], rounds: 5 });
    await addBlock(api, game.gameId, [["T0", 0]]);
    const before = await queueLength(api, game.gameId);
    // Another transaction holds the player's row of the grant: the spin's statement waits for it.
    const { spinning } = await api.database.sql.begin(async (tx) => {
      await tx`select 1 from free_round_players where grant_id = ${freeRoundsId} for update`;
      const spinning = freeSpin({ playerId, freeRoundsId });
      // The spin must be held up on the lock; an answer before that says why it was not.
      const answeredFirst = spinning.then((answer) => {
        throw new Error(`answered before waiting for the lock: ${answer.status} ${JSON.stringify(answer.body)}`);
      });
      await Promise.race([waitForLockWaiters(tx, 1), answeredFirst]);
      answeredFirst.catch(() => {});
      const cancel = await api.request(`${P}/free-rounds/${freeRoundsId}/cancel`, {
        method: "POST",
        apiKey: partner.apiKey,
      });
      expect(cancel.body.status).toBe("cancelled");
      return { spinning };
    });
    const answer = await spinning;
    expect([answer.status, answer.body.errorCode]).toEqual([409, "KS-4218"]);
    expect(answer.body.message).toMatch(/cancelled/);
    expect(await roundsUsed(freeRoundsId, playerId)).toBe(0);
    expect(await queueLength(api, game.gameId)).toBe(before);
  });

  it("an expired grant, from its expiresAt on, with no job run", async () => {
    const playerId = newPlayer();
    const expiresAt = new Date(Date.now() + 2_500);
    const { freeRoundsId } = await grant({ playerIds: [playerId], rounds: 5, expiresAt: expiresAt.toISOString() });
    await addBlock(api, game.gameId, [
      ["T0", 0],
      ["T0", 0],
    ]);
    expect((await freeSpin({ playerId, freeRoundsId })).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, expiresAt.getTime() - Date.now() + 50)));
    await refused({ freeRoundsId }, playerId, /expired/);
    expect(await written(playerId)).toEqual({ spins: 1, freeRoundSpins: 1 });
  });

  it("is 404 KS-4219 for an unknown grant or another partner's, or the other environment's", async () => {
    const playerId = newPlayer();
    const { freeRoundsId } = await grant({ playerIds: [playerId], rounds: 5 });
    const stranger = await api.createPartner();
    const strangersGame = await createGame(api, stranger.partnerId, { maxWagerUsd: 100 });
    const theirs = await spin(api, stranger.apiKey, { gameId: strangersGame.gameId, playerId, freeRoundsId });
    expect([theirs.status, theirs.body.errorCode]).toEqual([404, "KS-4219"]);
    const production = await issueKey(api, partner.partnerId, "production");
    const otherEnvironment = await spin(api, production, { gameId: game.gameId, playerId, freeRoundsId });
    expect([otherEnvironment.status, otherEnvironment.body.errorCode]).toEqual([404, "KS-4219"]);
    for (const unknown of ["fr_0000000000000000000000", "not an id", "x".repeat(64)]) {
      const response = await freeSpin({ playerId, freeRoundsId: unknown });
      expect([response.status, response.body.errorCode]).toEqual([404, "KS-4219"]);
    }
    expect(await written(playerId)).toEqual({ spins: 0, freeRoundSpins: 0 });
  });
});

describe("concurrency and idempotency", () => {
  it("20 concurrent spins on a 5-round grant over two API processes: exactly 5 × 200 and 15 × 409 KS-4218", async () => {
    const playerId = newPlayer();
    const { freeRoundsId } = await grant({ playerIds: [playerId], rounds: 5 });
    await addBlock(
      api,
      game.gameId,
      Array.from({ length: 20 }, () => ["T1", 1] as [string, number]),
    );
    const before = await queueLength(api, game.gameId);
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => freeSpin({ playerId, freeRoundsId }, undefined, i % 2 ? other : api)),
    );
    const statuses = answers.map((answer) => `${answer.status} ${answer.body.errorCode ?? ""}`.trim());
    expect(statuses.filter((status) => status === "200")).toHaveLength(5);
    expect(statuses.filter((status) => status === "409 KS-4218")).toHaveLength(15);
    const left = answers.filter((answer) => answer.status === 200).map((answer) => answer.body.freeRound.roundsLeft);
    expect(left.sort()).toEqual([0, 1, 2, 3, 4]);
    expect(await roundsUsed(freeRoundsId, playerId)).toBe(5);
    expect(await written(playerId)).toEqual({ spins: 5, freeRoundSpins: 5 });
    // The refused spins' outcomes went back: only the five used ones left the queue.
    expect(await queueLength(api, game.gameId)).toBe(before - 5);
    expect(await playerOf(playerId)).toMatchObject({ totalSpins: 5, totalWageredUsd: 0, balanceUsd: 10 });
  });

  it("batches paid and free-round spins together, each player charged exactly what it pays", async () => {
    const free = newPlayer();
    const paid = newPlayer();
    const { freeRoundsId } = await grant({ playerIds: [free], rounds: 4, wagerUsd: 2 });
    await addBlock(
      api,
      game.gameId,
      Array.from({ length: 8 }, () => ["T1", 1.5] as [string, number]),
    );
    const answers = await Promise.all([
      ...Array.from({ length: 4 }, (_, i) =>
        freeSpin({ playerId: free, freeRoundsId }, undefined, i % 2 ? other : api),
      ),
      ...Array.from({ length: 4 }, (_, i) => freeSpin({ playerId: paid, wagerUsd: 2 }, undefined, i % 2 ? other : api)),
    ]);
    expect(answers.map((answer) => answer.status)).toEqual(Array(8).fill(200));
    // Each spin pays 3 USD: the free player keeps every payout, the paying one nets 1 USD a spin.
    expect(await playerOf(free)).toMatchObject({ totalSpins: 4, totalWageredUsd: 0, totalPaidUsd: 12, balanceUsd: 12 });
    expect(await playerOf(paid)).toMatchObject({ totalSpins: 4, totalWageredUsd: 8, totalPaidUsd: 12, balanceUsd: 4 });
    expect(answers.slice(4).map((answer) => answer.body.freeRound)).toEqual(Array(4).fill(null));
  });

  it("replays a keyed free-round spin with its first result, using no second round, on either process", async () => {
    const playerId = newPlayer();
    const { freeRoundsId } = await grant({ playerIds: [playerId], rounds: 3 });
    // Each concurrent request takes an outcome before its key's lock tells it it is a replay (and gives it back).
    await addBlock(
      api,
      game.gameId,
      Array.from({ length: 6 }, () => ["T0", 0] as [string, number]),
    );
    const key = `fr-key-${playerId}`;
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) => freeSpin({ playerId, freeRoundsId }, key, i % 2 ? other : api)),
    );
    expect(answers.map((answer) => answer.status)).toEqual(Array(6).fill(200));
    expect(new Set(answers.map((answer) => JSON.stringify(answer.body))).size).toBe(1);
    expect(answers[0]!.body.freeRound).toEqual({ freeRoundsId, roundsLeft: 2 });
    expect(await roundsUsed(freeRoundsId, playerId)).toBe(1);
    // The same key with another body (the wager now given) is another request: KS-4101.
    const changed = await freeSpin({ playerId, freeRoundsId, wagerUsd: 2 }, key);
    expect([changed.status, changed.body.errorCode]).toEqual([400, "KS-4101"]);
  });
});

describe("voids and settlement", () => {
  it("a void reverses the payout only, counts no voided wager, and gives the round back while the grant is active", async () => {
    const playerId = newPlayer();
    const { freeRoundsId } = await grant({ playerIds: [playerId], rounds: 2, wagerUsd: 2 });
    await addBlock(api, game.gameId, [["T3", 10]]);
    const won = await freeSpin({ playerId, freeRoundsId });
    expect(won.body).toMatchObject({ balance: { balanceUsd: 20 }, freeRound: { roundsLeft: 1 } });
    const voided = await api.request(`${P}/spins/${won.body.spinId}/void`, {
      method: "POST",
      apiKey: partner.apiKey,
      json: { reason: "wallet refused the credit" },
    });
    expect(voided.status, JSON.stringify(voided.body)).toBe(200);
    expect(voided.body.freeRound).toEqual({ freeRoundsId, roundsLeft: 1 });
    expect(await playerOf(playerId)).toMatchObject({
      balanceUsd: 0,
      totalSpins: 0,
      totalWageredUsd: 0,
      totalPaidUsd: 0,
    });
    expect(await roundsOf(freeRoundsId, playerId)).toMatchObject({ roundsUsed: 0, roundsLeft: 2, paidUsd: 0 });
  });

  it("keeps the round used when the grant was cancelled before the void", async () => {
    const playerId = newPlayer();
    const { freeRoundsId } = await grant({ playerIds: [playerId], rounds: 2 });
    await addBlock(api, game.gameId, [["T0", 0]]);
    const spun = await freeSpin({ playerId, freeRoundsId });
    await api.request(`${P}/free-rounds/${freeRoundsId}/cancel`, { method: "POST", apiKey: partner.apiKey });
    const voided = await api.request(`${P}/spins/${spun.body.spinId}/void`, {
      method: "POST",
      apiKey: partner.apiKey,
      json: { reason: "session closed" },
    });
    expect(voided.status).toBe(200);
    expect(await roundsUsed(freeRoundsId, playerId)).toBe(1);
  });

  it("settles the day with free rounds apart: freeRoundSpins, freeRoundWagerUsd, totalWageredUsd without them", async () => {
    const owner = await api.createPartner();
    const own = await createGame(api, owner.partnerId, { maxWagerUsd: 100 });
    const playerId = newPlayer();
    const { freeRoundsId } = await grant({
      playerIds: [playerId],
      rounds: 2,
      wagerUsd: 3,
      gameId: own.gameId,
      apiKey: owner.apiKey,
    });
    await addBlock(api, own.gameId, [
      ["T3", 10],
      ["T0", 0],
      ["T1", 1],
    ]);
    const spinOwn = (json: Record<string, unknown>) =>
      spin(api, owner.apiKey, { gameId: own.gameId, playerId, ...json });
    expect((await spinOwn({ freeRoundsId })).status).toBe(200); // pays 30, partner paid the 3
    expect((await spinOwn({ freeRoundsId })).status).toBe(200); // pays 0
    expect((await spinOwn({ wagerUsd: 5 })).status).toBe(200); // a paid spin: 5 wagered, 5 paid
    const reportDate = new Date().toISOString().slice(0, 10);
    const report = await operatorGenerate(api, owner.partnerId, { reportDate, environment: "sandbox" });
    expect(report.status, JSON.stringify(report.body)).toBe(201);
    const expected = {
      totalSpins: 3,
      totalWageredUsd: 5,
      totalPaidUsd: 35,
      freeRoundSpins: 2,
      freeRoundWagerUsd: 6,
      voidedSpins: 0,
      netUsd: -30,
    };
    expect(report.body).toMatchObject(expected);
    expect(report.body.games).toEqual([expect.objectContaining({ gameId: own.gameId, ...expected })]);
  });
});
