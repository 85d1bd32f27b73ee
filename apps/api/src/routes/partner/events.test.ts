import { type EventType, newId } from "@outcomes/core";
import { ensurePartitions, events, games, insertEvent } from "@outcomes/db";
import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import { addBlock, createGame, issueKey, type OutcomeSpec, spin } from "@outcomes/testkit/spin-path";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({ LARGE_WIN_THRESHOLD_USD: "5" });
});
afterAll(async () => {
  await api.close();
});

const DAY_MS = 86_400_000;

function readLog(apiKey: string, query = "") {
  return api.request(`/api/partner/v1/events${query}`, { apiKey });
}

function record(
  partnerId: string,
  type: EventType,
  data: object,
  options: { environment?: "production"; now?: Date } = {},
) {
  const environment = options.environment ?? "sandbox";
  return insertEvent(api.database.db, { partnerId, environment, type, data, now: options.now });
}

describe("GET /events", () => {
  it("lists the partner's events of its environment in ascending sequence, paged by nextAfter", async () => {
    const { partnerId, apiKey } = await api.createPartner();
    const other = await api.createPartner();
    const productionKey = await issueKey(api, partnerId, "production");
    const first = await record(partnerId, "block.low_reserve", { gameId: 1 });
    await record(other.partnerId, "block.low_reserve", { gameId: 2 });
    await record(partnerId, "api_key.expiring", { daysBeforeExpiry: 7 }, { environment: "production" });
    const second = await record(partnerId, "spin.large_win", { spinId: "spn_x", payoutUsd: 5000 });
    const third = await record(partnerId, "settlement.report_ready", { reportDate: "2026-01-01" });

    const all = await readLog(apiKey);
    expect(all.status).toBe(200);
    expect(all.body).toEqual({ events: [first, second, third], nextAfter: 3 });
    expect(Object.keys(all.body.events[1])).toEqual(["id", "sequence", "type", "createdAt", "environment", "data"]);
    expect(all.body.events.map((event: { sequence: number }) => event.sequence)).toEqual([1, 2, 3]);

    const page1 = await readLog(apiKey, "?limit=2");
    expect(page1.body).toEqual({ events: [first, second], nextAfter: 2 });
    const page2 = await readLog(apiKey, `?after=${page1.body.nextAfter}&limit=2`);
    expect(page2.body).toEqual({ events: [third], nextAfter: 3 });
    const caughtUp = await readLog(apiKey, "?after=3");
    expect(caughtUp.body).toEqual({ events: [], nextAfter: 3 });

    const largeWins = await readLog(apiKey, "?type=spin.large_win");
    expect(largeWins.body).toEqual({ events: [second], nextAfter: 2 });
    expect((await readLog(apiKey, "?type=spin.large_win&after=2")).body).toEqual({ events: [], nextAfter: 2 });

    // Each partner and environment has a sequence of its own.
    const production = await readLog(productionKey);
    expect(
      production.body.events.map((event: { type: string; sequence: number }) => [event.type, event.sequence]),
    ).toEqual([["api_key.expiring", 1]]);
    expect((await readLog(other.apiKey)).body.events.map((event: { sequence: number }) => event.sequence)).toEqual([1]);
  });

  it.each([
    ["a negative after", "?after=-1"],
    ["a fractional after", "?after=1.5"],
    ["a non-numeric after", "?after=abc"],
    ["limit 0", "?limit=0"],
    ["limit 1001", "?limit=1001"],
    ["an unknown type", "?type=spin.small_win"],
  ])("refuses %s with 400 KS-4101", async (_name, query) => {
    const { apiKey } = await api.createPartner();
    const response = await readLog(apiKey, query);
    expect([response.status, response.body.errorCode]).toEqual([400, "KS-4101"]);
  });

  it("accepts limit 1000 and keeps events older than 30 days", async () => {
    const { partnerId, apiKey } = await api.createPartner();
    const fortyDaysAgo = new Date(Date.now() - 40 * DAY_MS);
    await ensurePartitions(api.database.db, "events", { from: fortyDaysAgo, to: new Date(fortyDaysAgo.getTime() + 1) });
    const old = await record(partnerId, "block.low_reserve", { gameId: 1 }, { now: fortyDaysAgo });
    const response = await readLog(apiKey, "?limit=1000");
    expect(response.body).toEqual({ events: [old], nextAfter: 1 });
  });

  it("numbers the events of concurrent spin batches and keyed spins without gaps or deadlocks", async () => {
    // Large wins (T3 × 10 ≥ $5) and block starts that drop the reserve (block.low_reserve), of two
    // partners, in group commits and keyed transactions at once: each partner's sequence is 1..n.
    const partners = await Promise.all([api.createPartner(), api.createPartner()]);
    const specs: OutcomeSpec[] = Array.from({ length: 5 }, (_, i) => (i % 2 === 0 ? ["T3", 10] : ["T0", 0]));
    const setups = await Promise.all(
      partners.map(async (partner) => {
        const game = await createGame(api, partner.partnerId, { maxWagerUsd: 100 });
        for (let block = 0; block < 12; block++) await addBlock(api, game.gameId, specs);
        await api.database.db.update(games).set({ lowReserveArmed: true }).where(eq(games.id, game.gameId));
        await readLog(partner.apiKey); // the key is known before the burst (unknown keys are throttled)
        return { ...partner, gameId: game.gameId };
      }),
    );
    const answers = await Promise.all(
      Array.from({ length: 120 }, (_, i) => {
        const setup = setups[i % 2]!;
        const body = { gameId: setup.gameId, playerId: `p-${i % 7}`, wagerUsd: 1 };
        return spin(api, setup.apiKey, body, i % 3 === 0 ? newId("idem") : undefined);
      }),
    );
    expect(answers.filter((answer) => answer.status !== 200).map((answer) => answer.body)).toEqual([]);

    for (const setup of setups) {
      const listed = (await readLog(setup.apiKey, "?limit=1000")).body.events;
      expect(listed.map((event: { sequence: number }) => event.sequence)).toEqual(
        Array.from({ length: listed.length }, (_, i) => i + 1),
      );
      const wins = answers.filter((answer) => answer.body.gameId === setup.gameId && answer.body.outcome.payoutUsd > 0);
      const winEvents = listed.filter((event: { type: string }) => event.type === "spin.large_win");
      expect(winEvents.map((event: { data: { spinId: string } }) => event.data.spinId).sort()).toEqual(
        wins.map((answer) => answer.body.spinId).sort(),
      );
      expect(listed.filter((event: { type: string }) => event.type === "block.low_reserve")).toHaveLength(1);
      const stored = await api.database.db.select().from(events).where(eq(events.partnerId, setup.partnerId));
      expect(stored).toHaveLength(listed.length);
    }
  });
});
