import { encodeQueuedOutcome, parseQueueItem } from "@outcomes/core";
import { events, spins } from "@outcomes/db";
import { testApiForFile } from "@outcomes/testkit/file-fixture";
import { registerTestGame } from "@outcomes/testkit/games";
import {
  addBlock,
  createGame,
  type FixtureGame,
  partnerWithGame,
  queueItems,
  queueLength,
  spin,
} from "@outcomes/testkit/spin-path";
import { eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";

const api = testApiForFile();
let apiKey: string;
let game: FixtureGame;

beforeAll(async () => {
  ({ apiKey, game } = await partnerWithGame(api, { maxWagerUsd: 1000, largeWinThresholdUsd: 100 }));
});

/** Makes every insert into `table` raise, as a database failing in the middle of the spin would. */
async function breakInserts(table: "spins" | "events") {
  await api.database.sql.unsafe(`
    create or replace function fail_insert() returns trigger language plpgsql as
      $$ begin raise exception 'forced failure'; end $$;
    create trigger fail_insert before insert on ${table} for each row execute function fail_insert();`);
}
async function repairInserts(table: "spins" | "events") {
  await api.database.sql.unsafe(`drop trigger fail_insert on ${table}`);
}

async function balanceOf(playerId: string) {
  const response = await api.request(`/api/partner/v1/players/${playerId}`, { apiKey });
  return response.status === 200 ? response.body.balanceUsd : response.body.errorCode;
}

describe("a spin whose commit fails", () => {
  it("answers KS-5003, deducts nothing, puts the outcome back in front, and then succeeds", async () => {
    await addBlock(api, game.gameId, [
      ["T1", 2],
      ["T0", 0],
      ["T1", 2],
    ]);
    const first = await spin(api, apiKey, { gameId: game.gameId, playerId: "steady", wagerUsd: 1 });
    expect([first.status, first.body.balance.balanceUsd]).toEqual([200, 1]);
    const queueBefore = await queueItems(api, game.gameId);

    await breakInserts("spins");
    for (const playerId of ["steady", "newcomer"]) {
      const failed = await spin(api, apiKey, { gameId: game.gameId, playerId, wagerUsd: 5 });
      expect([failed.status, failed.body.errorCode]).toEqual([500, "KS-5003"]);
    }
    expect(await queueItems(api, game.gameId)).toEqual(queueBefore);
    expect(await balanceOf("steady")).toBe(1);
    expect(await balanceOf("newcomer")).toBe("KS-4204");

    await repairInserts("spins");
    const retried = await spin(api, apiKey, { gameId: game.gameId, playerId: "steady", wagerUsd: 5 });
    expect([retried.status, retried.body.outcome.prizeTier, retried.body.balance.balanceUsd]).toEqual([200, "T0", -4]);
    expect(await queueLength(api, game.gameId)).toBe(1);
  });

  it("rolls the spin back with its large-win event: both are one transaction", async () => {
    const own = await createGame(api, game.partnerId, { maxWagerUsd: 1000, largeWinThresholdUsd: 100 });
    await addBlock(api, own.gameId, [["T5", 100]]);
    await breakInserts("events");
    const failed = await spin(api, apiKey, { gameId: own.gameId, playerId: "winner", wagerUsd: 2 });
    expect([failed.status, failed.body.errorCode]).toEqual([500, "KS-5003"]);
    expect(await api.database.db.select().from(spins).where(eq(spins.gameId, own.gameId))).toEqual([]);
    expect(await balanceOf("winner")).toBe("KS-4204");
    expect(await queueLength(api, own.gameId)).toBe(1);

    await repairInserts("events");
    const won = await spin(api, apiKey, { gameId: own.gameId, playerId: "winner", wagerUsd: 2 });
    expect([won.status, won.body.outcome.payoutUsd, won.body.balance.balanceUsd]).toEqual([200, 200, 198]);
    const stored = await api.database.db.select().from(events).where(eq(events.partnerId, game.partnerId));
    expect(stored.map((event) => (event.payload as any).data.spinId)).toEqual([won.body.spinId]);
  });

  it("answers KS-5003 when Redis refuses the pop, with nothing changed", async () => {
    const own = await createGame(api, game.partnerId);
    await api.deps.redis.set(api.deps.keys.outcomeQueue(await api.gameOwner(own.gameId)), "not a list");
    const failed = await spin(api, apiKey, { gameId: own.gameId, playerId: "redis-less", wagerUsd: 1 });
    expect([failed.status, failed.body.errorCode]).toEqual([500, "KS-5003"]);
    expect(await balanceOf("redis-less")).toBe("KS-4204");
  });
});

describe("outcomes that cannot be used", () => {
  it("is dropped, never served twice, and the next outcome is served instead", async () => {
    const own = await createGame(api, game.partnerId);
    const [used, next] = await addBlock(api, own.gameId, [
      ["T1", 2],
      ["T0", 0],
    ]);
    const first = await spin(api, apiKey, { gameId: own.gameId, playerId: "dup", wagerUsd: 1 });
    expect(first.body.outcome.prizeTier).toBe("T1");
    // A stale copy of the served outcome back in front (as after a commit that went through but
    // reported a failure, or a queue rebuilt from old data).
    await api.deps.redis.lpush(api.deps.keys.outcomeQueue(await api.gameOwner(own.gameId)), encodeQueuedOutcome(used!));
    const second = await spin(api, apiKey, { gameId: own.gameId, playerId: "dup", wagerUsd: 1 });
    expect([second.status, second.body.outcome.prizeTier, second.body.balance.balanceUsd]).toEqual([200, "T0", 0]);
    expect(await queueLength(api, own.gameId)).toBe(0);
    const rows = await api.database.db.select().from(spins).where(eq(spins.gameId, own.gameId));
    expect(rows.map((row) => row.outcomeIndex).sort()).toEqual([used!.index, next!.index]);
  });

  it("drops unreadable items and outcomes of unknown blocks, and serves the next", async () => {
    const own = await createGame(api, game.partnerId);
    await addBlock(api, own.gameId, [["T1", 2]]);
    const ghost = encodeQueuedOutcome({
      blockId: 987_654,
      index: 0,
      tier: "T6",
      multiplierMillionths: 1e9,
      reelSymbols: [],
    });
    await api.deps.redis.lpush(api.deps.keys.outcomeQueue(await api.gameOwner(own.gameId)), "not json", ghost);
    const response = await spin(api, apiKey, { gameId: own.gameId, playerId: "ghost", wagerUsd: 1 });
    expect([response.status, response.body.outcome.prizeTier, response.body.balance.balanceUsd]).toEqual([
      200,
      "T1",
      1,
    ]);
    expect(await queueLength(api, own.gameId)).toBe(0);
  });

  it("drops compact items of an unknown block, of another layout or with an index out of range, and serves the next", async () => {
    const registered = await registerTestGame(api);
    const queue = api.deps.keys.outcomeQueue(await api.gameOwner(registered.gameId));
    const next = parseQueueItem((await api.deps.redis.lindex(queue, 0)) as string);
    const length = await queueLength(api, registered.gameId);
    const entryHex = (bytes: number[]) => Buffer.from(bytes).toString("hex");
    await api.deps.redis.lpush(
      queue,
      `~987654.0.${entryHex(Array(10).fill(0))}`, // no such block
      `~${next.blockId}.5.${entryHex([1, 2])}`, // 2 bytes: not an entry of a 3×3 game
      `~${next.blockId}.6.${entryHex([200, ...Array(9).fill(0)])}`, // tier 200 of 7
      `~${next.blockId}.7.${entryHex([1, ...Array(9).fill(99)])}`, // symbol 99 of 8
    );
    const response = await spin(api, registered.apiKey, {
      gameId: registered.gameId,
      playerId: "compact",
      wagerUsd: 1,
    });
    expect(response.status).toBe(200);
    expect(response.body.fairness).toEqual({ blockId: next.blockId, index: next.index });
    expect(await queueLength(api, registered.gameId)).toBe(length - 1);
  });
});
