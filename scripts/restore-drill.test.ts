import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fillReserve, reserveTargets } from "@outcomes/blocks";
import { deleteKeysUnder } from "@outcomes/queue";
import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import { registerTestGame, type TestGame } from "@outcomes/testkit/games";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backUp, dropDatabase, pgDumpFits, readLedger, restore } from "./restore-drill.js";

const PARTNER = "/api/partner/v1";
let api: TestApi;
let game: TestGame;
let dir: string;
let unfit: string | undefined;

beforeAll(async () => {
  // Small blocks: the drill's rebuild loads whole blocks.
  api = await startTestApi({ BLOCK_SIZE: "200", MIN_READY_BLOCKS: "1", TARGET_READY_BLOCKS: "2" });
  game = await registerTestGame(api);
  dir = await mkdtemp(join(tmpdir(), "restore-drill-"));
  unfit = await pgDumpFits(api.database.url);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await api?.close();
});

const spin = (playerId: string, wagerUsd: number, key?: string) =>
  api.request(`${PARTNER}/spins`, {
    method: "POST",
    apiKey: game.apiKey,
    headers: key ? { "Idempotency-Key": key } : {},
    json: { gameId: game.gameId, playerId, wagerUsd },
  });

/** Every outcome item queued for the game, and the positions of the outcomes spins have used. */
async function queuedAndUsed() {
  const owner = await api.gameOwner(game.gameId);
  const items = await api.deps.redis.lrange(api.deps.keys.outcomeQueue(owner), 0, -1);
  const queued = items.map((item) => /^~(\d+)\.(\d+)\./.exec(item)?.slice(1, 3).join("."));
  const used = (await readLedger(api.database.url)).usedOutcomes as Array<{ block_id: string; outcome_index: number }>;
  return { queued, used: new Set(used.map((row) => `${row.block_id}.${row.outcome_index}`)) };
}

describe("the restore drill: back up, lose Postgres and Redis, restore, rebuild", () => {
  it("restores every balance and report exactly, and serves no used outcome again", async ({ skip }) => {
    skip(unfit !== undefined, unfit);
    const started = Date.now();
    // The day's business: plain and keyed spins of three players, a void, a settlement report.
    for (let round = 0; round < 10; round++) expect((await spin(`player-${round % 3}`, 1 + round)).status).toBe(200);
    const keyed = await spin("player-0", 2.5, "round-keyed");
    expect(keyed.status).toBe(200);
    const voided = await api.request(`${PARTNER}/spins/${keyed.body.spinId}/void`, {
      method: "POST",
      apiKey: game.apiKey,
      json: { reason: "Wallet refused the debit" },
    });
    expect(voided.status).toBe(200);
    const today = new Date().toISOString().slice(0, 10);
    const report = await api.request(`/api/admin/v1/partners/${game.partnerId}/settlements`, {
      method: "POST",
      admin: true,
      json: { reportDate: today, environment: "sandbox" },
    });
    expect(report.status).toBe(201);
    const before = await readLedger(api.database.url);
    expect(before.players).toHaveLength(3);

    // Back up; then both stores are lost.
    const file = join(dir, "outcomes.dump");
    backUp(api.database.url, file);
    await dropDatabase(api.database.url);
    await deleteKeysUnder(api.deps.redis, api.redisPrefix);
    expect(await api.deps.redis.keys(`${api.redisPrefix}*`)).toEqual([]);

    // Restore Postgres: the ledger is exactly as it was.
    await restore(api.database.url, file);
    expect(await readLedger(api.database.url)).toEqual(before);

    // Rebuild Redis the way the blocks worker does (its blocks.generate job): each game's list from
    // the outcomes no spin has used.
    const { db, redis, keys, logger, env } = api.deps;
    const rebuilt = await fillReserve({ db, redis, keys, logger, targets: reserveTargets(env) }, game.gameId);
    expect(rebuilt.rebuiltOutcomes).toBeGreaterThan(0);
    const { queued, used } = await queuedAndUsed();
    expect(queued.length).toBeGreaterThan(0);
    expect(queued.filter((position) => used.has(position!))).toEqual([]);

    // Business goes on: the key, the keyed spin's replay and the balances chain on from the restore.
    const replay = await spin("player-0", 2.5, "round-keyed");
    expect([replay.status, replay.body.spinId]).toEqual([200, keyed.body.spinId]);
    const player = before.players.find((row) => (row as { external_id: string }).external_id === "player-1") as {
      balance_micros: string;
    };
    const next = await spin("player-1", 1);
    expect(next.status).toBe(200);
    const expected = Number(player.balance_micros) + Math.round(next.body.outcome.payoutUsd * 1e6) - 1_000_000;
    expect(Math.round(next.body.balance.balanceUsd * 1e6)).toBe(expected);
    expect(Date.now() - started).toBeLessThan(20_000);
  });
});
