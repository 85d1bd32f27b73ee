import { newId } from "@outcomes/core";
import { ensurePartitions, events, players, spins, spinVoids } from "@outcomes/db";
import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import { cliAgainst, errorCode } from "@outcomes/testkit/cli";
import {
  addBlock,
  asRead,
  createGame,
  type FixtureGame,
  issueKey,
  type OutcomeSpec,
  spin,
} from "@outcomes/testkit/spin-path";
import { and, eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * Voids and recall over HTTP (CONTRACT §13): GET /spins/{spinId}, POST /spins/{spinId}/void, `voided`
 * on every spin result, the player's figures, the event, the window, concurrency across two API
 * processes, isolation (§9), the CLI, and the routes before the rollout of release 2 finished.
 */
let api: TestApi;
let other: TestApi;
let apiKey: string;
let game: FixtureGame;

beforeAll(async () => {
  // A window of 1 hour: a spin moved 61 minutes back is past it, and still found by its id.
  api = await startTestApi({ VOID_WINDOW_HOURS: "1" });
  other = await startTestApi({ VOID_WINDOW_HOURS: "1" }, { shareWith: api });
  const partner = await api.createPartner();
  apiKey = partner.apiKey;
  game = await createGame(api, partner.partnerId, { maxWagerUsd: 100 });
});
afterAll(async () => {
  await other?.close();
  await api?.close();
});

const P = "/api/partner/v1";
const voidSpin = (spinId: string, json: unknown, key = apiKey, via = api) =>
  via.request(`${P}/spins/${spinId}/void`, { method: "POST", apiKey: key, json });
const getSpin = (spinId: string, key = apiKey) => api.request(`${P}/spins/${spinId}`, { apiKey: key });
const playerOf = async (playerId: string, key = apiKey) =>
  (await api.request(`${P}/players/${playerId}`, { apiKey: key })).body;
const listed = async (playerId: string, key = apiKey) =>
  (await api.request(`${P}/players/${playerId}/spins?limit=100`, { apiKey: key })).body;
const voidedEvents = async (key = apiKey) =>
  (await api.request(`${P}/events?type=spin.voided&limit=1000`, { apiKey: key })).body.events;

/** Spins of `playerId` over the given outcomes (queued first), each answered 200. */
async function spinsOf(playerId: string, specs: OutcomeSpec[], wagerUsd = 2, target = game, key = apiKey) {
  await addBlock(api, target.gameId, specs);
  const answers = [];
  for (const _ of specs) {
    const answer = await spin(api, key, { gameId: target.gameId, playerId, wagerUsd });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    answers.push(answer.body);
  }
  return answers;
}

/** What the record holds for one spin's void: rows and events, to show that a refusal wrote nothing. */
async function voidRecord(spinId: string) {
  const { db } = api.database;
  const rows = await db.select().from(spinVoids).where(eq(spinVoids.spinId, spinId));
  const written = await db
    .select({ id: events.id })
    .from(events)
    .where(and(eq(events.type, "spin.voided"), sql`${events.payload}->'data'->>'spinId' = ${spinId}`));
  return { rows: rows.length, events: written.length };
}

describe("GET /spins/{spinId}", () => {
  it("answers the spin exactly as first answered, with voided: null, even after the player spun on", async () => {
    const [first] = await spinsOf("recall-1", [
      ["T3", 5],
      ["T0", 0],
    ]);
    expect(first.voided).toBeNull();
    const recalled = await getSpin(first.spinId);
    expect([recalled.status, recalled.body]).toEqual([200, asRead(first)]);
    expect((await playerOf("recall-1")).balanceUsd).toBe(8 - 2);
    expect(recalled.body.balance.balanceUsd).toBe(8);
  });

  it("recalls a forced sandbox spin too", async () => {
    const forced = await spin(api, apiKey, { gameId: game.gameId, playerId: "recall-2", wagerUsd: 1, forceTier: "T6" });
    expect(forced.body.forced).toBe(true);
    expect((await getSpin(forced.body.spinId)).body).toEqual(asRead(forced.body));
  });

  it("is 404 KS-4215 for another partner's or environment's spin and for ids that name nothing", async () => {
    const [own] = await spinsOf("recall-3", [["T0", 0]]);
    const stranger = await api.createPartner();
    const production = await issueKey(api, game.partnerId, "production");
    for (const [spinId, key] of [
      [own.spinId, stranger.apiKey],
      [own.spinId, production],
      [newId("spn"), apiKey],
      ["spn_short", apiKey],
      ["not%20an%20id", apiKey],
      ["spn_%00", apiKey],
    ] as const) {
      const answer = await getSpin(spinId, key);
      expect([spinId, answer.status, answer.body.errorCode]).toEqual([spinId, 404, "KS-4215"]);
    }
  });
});

describe("POST /spins/{spinId}/void", () => {
  it.each([
    ["no body field", {}, 400, "KS-4102"],
    ["a null reason", { reason: null }, 400, "KS-4102"],
    ["an empty reason", { reason: "" }, 400, "KS-4102"],
    ["a blank reason", { reason: "   " }, 400, "KS-4102"],
    ["a numeric reason", { reason: 42 }, 400, "KS-4101"],
    ["a reason of 501 characters", { reason: "x".repeat(501) }, 400, "KS-4101"],
  ])("refuses %s (%j) with %i %s and changes nothing", async (_name, body, status, code) => {
    const [spun] = await spinsOf(newId("plr"), [["T3", 5]]);
    const before = await playerOf(spun.playerId);
    const answer = await voidSpin(spun.spinId, body);
    expect([answer.status, answer.body.errorCode]).toEqual([status, code]);
    expect(await playerOf(spun.playerId)).toEqual(before);
    expect(await voidRecord(spun.spinId)).toEqual({ rows: 0, events: 0 });
    expect((await getSpin(spun.spinId)).body.voided).toBeNull();
  });

  it("reverses the spin on the player's balance and totals, atomically with the spin.voided event", async () => {
    const answers = await spinsOf("voider", [
      ["T0", 0],
      ["T3", 5],
      ["T0", 0],
    ]);
    const win = answers[1];
    expect(await playerOf("voider")).toMatchObject({
      balanceUsd: -6 + 10,
      totalSpins: 3,
      totalWageredUsd: 6,
      totalPaidUsd: 10,
    });
    const asked = Date.now();
    const voided = await voidSpin(win.spinId, { reason: "  Wallet refused the debit: insufficient funds " });
    expect(voided.status).toBe(200);
    expect(voided.body).toEqual({
      ...asRead(win),
      voided: { voidedAt: expect.any(String), reason: "Wallet refused the debit: insufficient funds" },
    });
    const voidedAt = Date.parse(voided.body.voided.voidedAt);
    expect(voidedAt).toBeGreaterThanOrEqual(asked - 1_000);
    expect(voidedAt).toBeLessThanOrEqual(Date.now() + 1_000);
    // balance += wager − payout; the totals count the two spins that stand.
    expect(await playerOf("voider")).toMatchObject({
      balanceUsd: 4 + 2 - 10,
      totalSpins: 2,
      totalWageredUsd: 4,
      totalPaidUsd: 0,
    });
    expect((await getSpin(win.spinId)).body).toEqual(voided.body);
    const list = await listed("voider");
    expect(list.total).toBe(3);
    expect(list.spins.map((spun: any) => [spun.spinId, spun.voided])).toEqual([
      [answers[2].spinId, null],
      [win.spinId, voided.body.voided],
      [answers[0].spinId, null],
    ]);
    const [event] = (await voidedEvents()).filter((each: any) => each.data.spinId === win.spinId);
    expect(event).toMatchObject({
      type: "spin.voided",
      environment: "sandbox",
      createdAt: voided.body.voided.voidedAt,
    });
    expect(event.data).toEqual({
      spinId: win.spinId,
      gameId: game.gameId,
      playerId: "voider",
      wagerUsd: 2,
      payoutUsd: 10,
      prizeTier: "T3",
      reason: "Wallet refused the debit: insufficient funds",
      voidedAt: voided.body.voided.voidedAt,
    });
    // The next spin's balance chains from the reversed one.
    const [next] = await spinsOf("voider", [["T0", 0]]);
    expect(next.balance.balanceUsd).toBe(-4 - 2);
  });

  it("answers a voided spin's void again, and changes nothing, however it is asked", async () => {
    const [spun] = await spinsOf("twice", [["T3", 5]]);
    const first = await voidSpin(spun.spinId, { reason: "session closed" });
    const after = await playerOf("twice");
    const again = await voidSpin(spun.spinId, { reason: "another reason" });
    expect([again.status, again.body]).toEqual([200, first.body]);
    expect(await playerOf("twice")).toEqual(after);
    expect(await voidRecord(spun.spinId)).toEqual({ rows: 1, events: 1 });
  });

  it("takes effect exactly once under 8 concurrent voids sent to two API processes", async () => {
    const [spun] = await spinsOf("concurrent", [["T3", 5]]);
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => voidSpin(spun.spinId, { reason: `try ${i}` }, apiKey, i % 2 ? other : api)),
    );
    expect(answers.map((answer) => answer.status)).toEqual(Array(8).fill(200));
    const [winner] = answers.map((answer) => answer.body.voided);
    expect(answers.map((answer) => answer.body)).toEqual(Array(8).fill({ ...asRead(spun), voided: winner }));
    expect(await playerOf("concurrent")).toMatchObject({
      balanceUsd: 0,
      totalSpins: 0,
      totalWageredUsd: 0,
      totalPaidUsd: 0,
    });
    expect(await voidRecord(spun.spinId)).toEqual({ rows: 1, events: 1 });
  });

  it("voids a forced sandbox spin", async () => {
    const forced = await spin(api, apiKey, { gameId: game.gameId, playerId: "forced", wagerUsd: 1, forceTier: "T6" });
    expect(forced.body).toMatchObject({ forced: true, outcome: { payoutUsd: 1000 } });
    const voided = await voidSpin(forced.body.spinId, { reason: "test round" });
    expect([voided.status, voided.body.forced, voided.body.voided.reason]).toEqual([200, true, "test round"]);
    expect(await playerOf("forced")).toMatchObject({ balanceUsd: 0, totalSpins: 0, totalPaidUsd: 0 });
  });

  it("replays a keyed spin with its void, once voided", async () => {
    await addBlock(api, game.gameId, [["T3", 5]]);
    const body = { gameId: game.gameId, playerId: "keyed", wagerUsd: 2 };
    const first = await spin(api, apiKey, body, "void-me");
    const voided = await voidSpin(first.body.spinId, { reason: "wallet timeout" });
    const replay = await spin(api, apiKey, body, "void-me");
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(asRead(replay.body)).toEqual(voided.body);
    expect(replay.body).toEqual({ ...first.body, voided: voided.body.voided });
  });

  it("is 409 KS-4217 past VOID_WINDOW_HOURS of the spin's createdAt, and then changes nothing", async () => {
    const [inside, outside, voidedEarlier] = await spinsOf("late", [
      ["T3", 5],
      ["T3", 5],
      ["T3", 5],
    ]);
    await voidSpin(voidedEarlier.spinId, { reason: "in time" });
    const { db } = api.database;
    await ensurePartitions(db, "spins", { from: new Date(Date.now() - 3 * 3_600_000), to: new Date() });
    const moveBack = (spinId: string, minutes: number) =>
      db.execute(
        sql`update spins set created_at = created_at - make_interval(mins => ${minutes}) where id = ${spinId}`,
      );
    await moveBack(inside.spinId, 59);
    await moveBack(outside.spinId, 61);
    await moveBack(voidedEarlier.spinId, 120);
    const before = await playerOf("late");

    const late = await voidSpin(outside.spinId, { reason: "too late" });
    expect([late.status, late.body.errorCode]).toEqual([409, "KS-4217"]);
    expect(late.body.message).toMatch(/^Spin can no longer be voided/);
    expect(await playerOf("late")).toEqual(before);
    expect(await voidRecord(outside.spinId)).toEqual({ rows: 0, events: 0 });

    const again = await voidSpin(voidedEarlier.spinId, { reason: "asked again" });
    expect([again.status, again.body.voided.reason]).toEqual([200, "in time"]);
    expect((await voidSpin(inside.spinId, { reason: "just in time" })).status).toBe(200);
  });

  it("is 404 KS-4215 for another partner's or environment's spin, and changes nothing", async () => {
    const [spun] = await spinsOf("victim", [["T3", 5]]);
    const stranger = await api.createPartner();
    const production = await issueKey(api, game.partnerId, "production");
    const before = await playerOf("victim");
    for (const key of [stranger.apiKey, production]) {
      const answer = await voidSpin(spun.spinId, { reason: "not mine" }, key);
      expect([answer.status, answer.body.errorCode]).toEqual([404, "KS-4215"]);
    }
    for (const unknown of [newId("spn"), "spn_short"]) {
      expect((await voidSpin(unknown, { reason: "nothing" })).body.errorCode).toBe("KS-4215");
    }
    expect(await playerOf("victim")).toEqual(before);
    expect(await voidRecord(spun.spinId)).toEqual({ rows: 0, events: 0 });
  });

  it("is refused with 400 KS-4103 when reversing would take the balance past 2^53 − 1 micro-USD", async () => {
    const [win] = await spinsOf("bounded", [["T3", 5]]);
    const { db } = api.database;
    await db
      .update(players)
      .set({ balanceMicros: -(Number.MAX_SAFE_INTEGER - 5) })
      .where(and(eq(players.partnerId, game.partnerId), eq(players.externalId, "bounded")));
    const before = await playerOf("bounded");
    const answer = await voidSpin(win.spinId, { reason: "wallet refused" });
    expect([answer.status, answer.body.errorCode]).toEqual([400, "KS-4103"]);
    expect(answer.body.message).toMatch(/balanceUsd/);
    expect(await playerOf("bounded")).toEqual(before);
    expect(await voidRecord(win.spinId)).toEqual({ rows: 0, events: 0 });
  });
});

describe("isolation (CONTRACT §9)", () => {
  it("one partner's voids, racing its own spins, never fail or change another partner's spins", async () => {
    const noisy = await api.createPartner();
    const noisyGame = await createGame(api, noisy.partnerId);
    const quiet = await api.createPartner();
    const quietGame = await createGame(api, quiet.partnerId);
    const wins: OutcomeSpec[] = Array.from({ length: 40 }, () => ["T3", 5]);
    const spun = [];
    for (let i = 0; i < 4; i++)
      spun.push(...(await spinsOf(`noisy-${i}`, wins.slice(0, 5), 2, noisyGame, noisy.apiKey)));
    await addBlock(api, noisyGame.gameId, wins.slice(0, 20));
    await addBlock(api, quietGame.gameId, wins);

    // Spins of 2 USD spread over four players and both API processes.
    const spinsOn = (count: number, apiKey: string, gameId: number, prefix: string) =>
      Promise.all(
        Array.from({ length: count }, (_, i) =>
          spin(i % 2 ? other : api, apiKey, { gameId, playerId: `${prefix}-${i % 4}`, wagerUsd: 2 }),
        ),
      );
    const [voids, noisySpins, quietSpins] = await Promise.all([
      Promise.all(
        spun.map((each, i) => voidSpin(each.spinId, { reason: "refused" }, noisy.apiKey, i % 2 ? other : api)),
      ),
      spinsOn(20, noisy.apiKey, noisyGame.gameId, "noisy"),
      spinsOn(40, quiet.apiKey, quietGame.gameId, "quiet"),
    ]);
    expect(quietSpins.map((answer) => answer.status)).toEqual(Array(40).fill(200));
    expect(voids.map((answer) => answer.status)).toEqual(Array(20).fill(200));
    expect(noisySpins.map((answer) => answer.status)).toEqual(Array(20).fill(200));
    for (let i = 0; i < 4; i++) {
      // Each noisy player: 5 voided spins and 5 standing ones, each +8.
      expect(await playerOf(`noisy-${i}`, noisy.apiKey)).toMatchObject({ balanceUsd: 40, totalSpins: 5 });
      expect(await playerOf(`quiet-${i}`, quiet.apiKey)).toMatchObject({ balanceUsd: 80, totalSpins: 10 });
    }
    // Every balance chain still adds up: each spin's balance after is the one before plus its own.
    const rows = await api.database.db
      .select({
        playerId: spins.playerId,
        after: spins.balanceAfterMicros,
        net: sql<number>`payout_micros - wager_micros`,
      })
      .from(spins)
      .where(eq(spins.partnerId, quiet.partnerId))
      .orderBy(spins.playerId, spins.createdAt);
    const chained = new Map<number, number>();
    for (const row of rows) {
      const balance = (chained.get(row.playerId) ?? 0) + Number(row.net);
      expect(row.after).toBe(balance);
      chained.set(row.playerId, balance);
    }
  });
});

describe("npm run cli -- spins get", () => {
  const { cli, cliJson } = cliAgainst(() => api);

  it("shows any partner's spin with its partner, environment and void; unknown KS-4215", async () => {
    const [spun] = await spinsOf("cli-player", [["T3", 5]]);
    const voided = await voidSpin(spun.spinId, { reason: "wallet refused" });
    expect(await cliJson("spins", "get", spun.spinId)).toEqual({
      partnerId: game.partnerId,
      environment: "sandbox",
      ...voided.body,
    });
    const text = await cli("spins", "get", spun.spinId);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/voidReason\s+wallet refused/);
    expect(text.stdout).toMatch(new RegExp(`partnerId\\s+${game.partnerId}`));
    expect(errorCode(await cli("spins", "get", newId("spn")))).toEqual([1, "error KS-4215"]);
    expect(errorCode(await cli("spins", "get", "no such spin"))).toEqual([1, "error KS-4215"]);
  });
});
