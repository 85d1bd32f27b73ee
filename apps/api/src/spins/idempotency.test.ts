import { dropExpiredIdempotencyPartitions, ensurePartitions, games, idempotencyKeys, spins } from "@outcomes/db";
import { testApiForFile } from "@outcomes/testkit/file-fixture";
import {
  addBlock,
  createGame,
  type FixtureGame,
  issueKey,
  partnerWithGame,
  queueLength,
  spin,
} from "@outcomes/testkit/spin-path";
import { eq, sql } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";

const api = testApiForFile();
let apiKey: string;
let game: FixtureGame;

beforeAll(async () => {
  ({ apiKey, game } = await partnerWithGame(api, { maxWagerUsd: 1000 }));
  await addBlock(
    api,
    game.gameId,
    Array.from({ length: 40 }, () => ["T1", 2] as [string, number]),
  );
});

async function spinCount() {
  const rows = await api.database.db.select().from(spins).where(eq(spins.gameId, game.gameId));
  return rows.length;
}

describe("Idempotency-Key on POST /spins", () => {
  it("refuses an empty or all-space key (KS-4101) and spins nothing", async () => {
    const body = { gameId: game.gameId, playerId: "idem-empty", wagerUsd: 1 };
    const before = [await queueLength(api, game.gameId), await spinCount()];
    for (const key of ["", "   ", "\t"]) {
      const refused = await spin(api, apiKey, body, key);
      expect([refused.status, refused.body.errorCode]).toEqual([400, "KS-4101"]);
      expect(refused.body.details).toEqual([expect.objectContaining({ path: "Idempotency-Key" })]);
    }
    expect([await queueLength(api, game.gameId), await spinCount()]).toEqual(before);
  });

  it("replays the first result for the same body, without a second spin", async () => {
    const body = { gameId: game.gameId, playerId: "idem-1", wagerUsd: 1 };
    const first = await spin(api, apiKey, body, "key-replay");
    const before = [await queueLength(api, game.gameId), await spinCount()];
    // `1.0` and reordered fields are the same request.
    const again = await spin(api, apiKey, { wagerUsd: 1.0, playerId: "idem-1", gameId: game.gameId }, "key-replay");
    expect(first.status).toBe(200);
    expect(again.status).toBe(200);
    expect(JSON.stringify(again.body)).toBe(JSON.stringify(first.body));
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    expect([await queueLength(api, game.gameId), await spinCount()]).toEqual(before);
    const player = await api.request("/api/partner/v1/players/idem-1", { apiKey });
    expect([player.body.totalSpins, player.body.balanceUsd]).toEqual([1, 1]);
  });

  it("refuses the key with another body (KS-4101) and changes nothing", async () => {
    await spin(api, apiKey, { gameId: game.gameId, playerId: "idem-2", wagerUsd: 1 }, "key-conflict");
    const before = [await queueLength(api, game.gameId), await spinCount()];
    const other = await spin(api, apiKey, { gameId: game.gameId, playerId: "idem-2", wagerUsd: 2 }, "key-conflict");
    expect([other.status, other.body.errorCode]).toEqual([400, "KS-4101"]);
    expect(other.body.message).toMatch(/already used for another request/);
    expect([await queueLength(api, game.gameId), await spinCount()]).toEqual(before);
  });

  it("scopes keys per partner and environment", async () => {
    const body = { gameId: game.gameId, playerId: "idem-3", wagerUsd: 1 };
    const first = await spin(api, apiKey, body, "key-shared");
    const otherPartner = await api.createPartner();
    const otherGame = await createGame(api, otherPartner.partnerId);
    await addBlock(api, otherGame.gameId, [["T0", 0]]);
    const theirs = await spin(api, otherPartner.apiKey, { ...body, gameId: otherGame.gameId }, "key-shared");
    expect([first.status, theirs.status, theirs.body.outcome.prizeTier]).toEqual([200, 200, "T0"]);
    // The same partner's production key does not see the sandbox record: the game is not its own.
    const production = await spin(api, await issueKey(api, game.partnerId, "production"), body, "key-shared");
    expect(production.body.errorCode).toBe("KS-4006");
  });

  it("makes concurrent duplicates wait for the first and return its result", async () => {
    const before = await queueLength(api, game.gameId);
    const body = { gameId: game.gameId, playerId: "idem-4", wagerUsd: 3 };
    const responses = await Promise.all(Array.from({ length: 8 }, () => spin(api, apiKey, body, "key-race")));
    expect(responses.map((r) => r.status)).toEqual(Array(8).fill(200));
    expect(new Set(responses.map((r) => r.body.spinId)).size).toBe(1);
    expect(responses.filter((r) => r.headers.get("idempotent-replayed") === "true")).toHaveLength(7);
    expect(await queueLength(api, game.gameId)).toBe(before - 1);
    const player = await api.request("/api/partner/v1/players/idem-4", { apiKey });
    expect([player.body.totalSpins, player.body.balanceUsd]).toEqual([1, 3]);
  });

  it("leaves no record when the spin fails, so the retry runs anew", async () => {
    const empty = await createGame(api, game.partnerId);
    const body = { gameId: empty.gameId, playerId: "idem-5", wagerUsd: 1 };
    const failed = await spin(api, apiKey, body, "key-retry");
    expect(failed.body.errorCode).toBe("KS-4203");
    await api.database.sql.unsafe(`
      create function fail_spin() returns trigger language plpgsql as $$ begin raise exception 'down'; end $$;
      create trigger fail_spin before insert on spins for each row execute function fail_spin();`);
    await addBlock(api, empty.gameId, [["T1", 2]]);
    const broken = await spin(api, apiKey, body, "key-retry");
    await api.database.sql.unsafe("drop trigger fail_spin on spins");
    expect(broken.body.errorCode).toBe("KS-5003");
    const records = await api.database.db.select().from(idempotencyKeys).where(eq(idempotencyKeys.key, "key-retry"));
    expect(records).toEqual([]);
    const retried = await spin(api, apiKey, body, "key-retry");
    expect([retried.status, retried.body.outcome.payoutUsd, retried.headers.get("idempotent-replayed")]).toEqual([
      200,
      2,
      null,
    ]);
  });

  it("ignores records older than 24 hours, reuses their key, and drops their expired day", async () => {
    const body = { gameId: game.gameId, playerId: "idem-6", wagerUsd: 1 };
    const first = await spin(api, apiKey, body, "key-old");
    const { db } = api.database;
    await db
      .update(idempotencyKeys)
      .set({ createdAt: sql`now() - interval '25 hours'` })
      .where(eq(idempotencyKeys.key, "key-old"));
    const second = await spin(api, apiKey, { ...body, wagerUsd: 2 }, "key-old");
    expect(second.status).toBe(200);
    expect(second.body.spinId).not.toBe(first.body.spinId);
    const replay = await spin(api, apiKey, { ...body, wagerUsd: 2 }, "key-old");
    expect(replay.body.spinId).toBe(second.body.spinId);

    // Both records moved to a day long expired, each at its own time of day: its partition goes whole.
    const threeDaysAgo = new Date(Date.now() - 3 * 24 * 3600_000);
    const [day] = await ensurePartitions(db, "idempotency_keys", {
      from: threeDaysAgo,
      to: new Date(threeDaysAgo.getTime() + 1),
    });
    await db
      .update(idempotencyKeys)
      .set({
        createdAt: sql`date_trunc('day', ${threeDaysAgo.toISOString()}::timestamptz, 'UTC')
          + (created_at - date_trunc('day', created_at, 'UTC'))`,
      })
      .where(eq(idempotencyKeys.key, "key-old"));
    // Any other expired day goes too (the template's oldest partition, made 25 h back, past 01:00 UTC).
    expect(await dropExpiredIdempotencyPartitions(db)).toContain(day);
    expect(await db.select().from(idempotencyKeys).where(eq(idempotencyKeys.key, "key-old"))).toEqual([]);
  });

  it("replays the first result even after the game was made inactive", async () => {
    const own = await createGame(api, game.partnerId);
    await addBlock(api, own.gameId, [["T1", 2]]);
    const body = { gameId: own.gameId, playerId: "idem-7", wagerUsd: 1 };
    const first = await spin(api, apiKey, body, "key-inactive");
    await api.database.db.update(games).set({ isActive: false }).where(eq(games.id, own.gameId));
    // The game cache holds rules for up to a second.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const fresh = await spin(api, apiKey, body, "key-inactive-2");
    const replay = await spin(api, apiKey, body, "key-inactive");
    expect(fresh.body.errorCode).toBe("KS-4202");
    expect([replay.status, replay.body.spinId]).toEqual([200, first.body.spinId]);
  });

  it("replays the first result when the game's queue has run dry, taking nothing", async () => {
    const own = await createGame(api, game.partnerId);
    await addBlock(api, own.gameId, [["T1", 2]]);
    const body = { gameId: own.gameId, playerId: "idem-8", wagerUsd: 1 };
    const first = await spin(api, apiKey, body, "key-dry");
    const fresh = await spin(api, apiKey, body, "key-dry-2");
    const replays = await Promise.all([1, 2, 3].map(() => spin(api, apiKey, body, "key-dry")));
    expect([first.status, fresh.status, fresh.body.errorCode]).toEqual([200, 503, "KS-4203"]);
    for (const replay of replays) expect([replay.status, replay.body.spinId]).toEqual([200, first.body.spinId]);
    expect(await queueLength(api, own.gameId)).toBe(0);
  });

  it("refuses a key longer than 255 characters with KS-4101", async () => {
    const response = await spin(api, apiKey, { gameId: game.gameId, playerId: "p", wagerUsd: 1 }, "k".repeat(256));
    expect([response.status, response.body.errorCode]).toEqual([400, "KS-4101"]);
  });
});
