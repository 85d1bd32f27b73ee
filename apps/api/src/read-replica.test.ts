import { createDatabase, migrateDatabase } from "@outcomes/db";
import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import { postgresBin, type StreamingPair, startStreamingPair } from "@outcomes/testkit/replica";
import { addBlock, createGame, type FixtureGame, spin } from "@outcomes/testkit/spin-path";
import { eventually } from "@outcomes/testkit/workers";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * DATABASE_READ_URL against a real streaming replica: a primary and a hot standby started from the
 * machine's Postgres binaries (pg_basebackup -R), the schema migrated on the primary only.
 */
// Where Postgres runs only in a container there are no server binaries to start a replica with.
const runnable = postgresBin() !== null;
let pair: StreamingPair;
let api: TestApi;
let apiKey: string;
let game: FixtureGame;

const onDatabase = (url: string) => Object.assign(new URL(url), { pathname: "/outcomes" }).toString();

beforeAll(async () => {
  if (!runnable) return;
  pair = await startStreamingPair();
  const primaryUrl = onDatabase(pair.primaryUrl);
  await migrateDatabase(primaryUrl);
  const primary = createDatabase(primaryUrl, { max: 10 });
  api = await startTestApi(
    { DATABASE_URL: primaryUrl, DATABASE_READ_URL: onDatabase(pair.replicaUrl) },
    { database: { ...primary, url: primaryUrl, drop: primary.close } },
  );
  const partner = await api.createPartner();
  apiKey = partner.apiKey;
  game = await createGame(api, partner.partnerId, { maxWagerUsd: 100 });
  await addBlock(api, game.gameId, [
    ["T1", 2],
    ["T0", 0],
    ["T1", 2],
  ]);
}, 120_000);
afterAll(async () => {
  await api?.close();
  await pair?.stop();
});

async function inRecovery(db: TestApi["deps"]["db"]): Promise<boolean> {
  const [row] = await db.execute<{ standby: boolean }>(sql`select pg_is_in_recovery() as standby`);
  return row!.standby;
}

const listSpins = (playerId: string) => api.request(`/api/partner/v1/players/${playerId}/spins`, { apiKey });

describe.skipIf(!runnable)("DATABASE_READ_URL (a streaming replica)", () => {
  it("serves listings from the replica and everything read-your-writes from the primary", async () => {
    expect([await inRecovery(api.deps.db), await inRecovery(api.deps.readDb)]).toEqual([false, true]);

    const body = { gameId: game.gameId, playerId: "replica-1", wagerUsd: 1 };
    const first = await spin(api, apiKey, body);
    expect(first.status).toBe(200);
    // The write reaches the replica-routed listing once replication has caught up.
    const caughtUp = await eventually(async () => {
      const listed = await listSpins("replica-1");
      return listed.body.spins?.length === 1 ? listed : null;
    });
    expect(caughtUp.body.spins[0].spinId).toBe(first.body.spinId);

    // Replay stopped on the replica: a new spin is on the primary only.
    await api.deps.readDb.execute(sql`select pg_wal_replay_pause()`);
    try {
      const second = await spin(api, apiKey, body);
      expect(second.status).toBe(200);
      // The player (read-your-writes, primary) has both spins; the listing (replica) still one.
      const player = await api.request("/api/partner/v1/players/replica-1", { apiKey });
      expect(player.body.totalSpins).toBe(2);
      const stale = await listSpins("replica-1");
      expect(stale.body.spins.map((s: { spinId: string }) => s.spinId)).toEqual([first.body.spinId]);
      // A replayed Idempotency-Key is answered from the primary.
      const keyed = await spin(api, apiKey, body, "replica-key");
      const replay = await spin(api, apiKey, body, "replica-key");
      expect([replay.status, replay.body.spinId]).toEqual([200, keyed.body.spinId]);
    } finally {
      await api.deps.readDb.execute(sql`select pg_wal_replay_resume()`);
    }
    const resumed = await eventually(async () => {
      const listed = await listSpins("replica-1");
      return listed.body.spins?.length === 3 ? listed : null;
    });
    expect(resumed.body.total).toBe(3);
  });
});
