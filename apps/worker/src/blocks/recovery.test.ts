import { appendOutcomes, fillReserve, sealNextBlock } from "@outcomes/blocks";
import { assertValidParSheet, OutcomeDrawer, parseQueueItem, queuedItems, SAMPLE_PAR_SHEET } from "@outcomes/core";
import { blocks, events, games, spins } from "@outcomes/db";
import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import { recordingJob, serveOutcomes } from "@outcomes/testkit/blocks";
import { registerTestGame } from "@outcomes/testkit/games";
import { queueItems } from "@outcomes/testkit/spin-path";
import { asc, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { blocksProcessor } from "./process.js";

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({ BLOCK_SIZE: "5", MIN_READY_BLOCKS: "2", TARGET_READY_BLOCKS: "3" });
});
afterAll(async () => {
  await api.close();
});

const generate = (gameId: number) => blocksProcessor(api.deps)({ gameId }, recordingJob().job);

/** What a Redis restart without persistence (or FLUSHDB) leaves of the game's keys: nothing. */
async function loseRedisList(gameId: number) {
  const game = await api.gameOwner(gameId);
  await api.deps.redis.del(api.deps.keys.outcomeQueue(game), api.deps.keys.outcomesLoadedThrough(game));
}

async function lowReserveEvents(gameId: number) {
  const rows = await api.database.db.select().from(events).where(eq(events.type, "block.low_reserve"));
  return rows.filter((row) => (row.payload as { data: { gameId: number } }).data.gameId === gameId);
}

describe("a lost Redis list", () => {
  it("is rebuilt from Postgres, in order, without the outcomes spins already used", async () => {
    const game = await registerTestGame(api);
    await serveOutcomes(api, game, 7);
    const left = await queueItems(api, game.gameId);
    expect(left).toHaveLength(8);

    await loseRedisList(game.gameId);
    const result = await generate(game.gameId);
    expect(result.rebuiltOutcomes).toBe(8);
    expect(result.blocksSealed).toBe(2);
    const items = await queueItems(api, game.gameId);
    expect(items.slice(0, 8)).toEqual(left);
    expect(items).toHaveLength(18);
    const used = await api.database.db.select().from(spins).where(eq(spins.gameId, game.gameId));
    const usedKeys = new Set(used.map((spin) => `${spin.blockId}:${spin.outcomeIndex}`));
    const listed = items.map(parseQueueItem).map((outcome) => `${outcome.blockId}:${outcome.index}`);
    expect(listed.filter((key) => usedKeys.has(key))).toEqual([]);
    expect(new Set(listed).size).toBe(18);
  });

  it("is not confused with a list emptied by spins: nothing is reloaded then", async () => {
    const game = await registerTestGame(api);
    await serveOutcomes(api, game, 15);
    expect(await queueItems(api, game.gameId)).toEqual([]);
    const result = await generate(game.gameId);
    expect(result.rebuiltOutcomes).toBeNull();
    expect(result.blocksSealed).toBe(3);
    const sequences = (await queueItems(api, game.gameId)).map((item) => parseQueueItem(item).blockId);
    const [first] = await api.database.db
      .select()
      .from(blocks)
      .where(eq(blocks.gameId, game.gameId))
      .orderBy(asc(blocks.sequence))
      .offset(3);
    expect(sequences[0]).toBe(first?.id);
  });

  it("gets blocks that were sealed but never loaded (a worker died in between)", async () => {
    const game = await registerTestGame(api);
    await serveOutcomes(api, game, 5);
    const drawer = new OutcomeDrawer(assertValidParSheet(SAMPLE_PAR_SHEET));
    const orphan = await sealNextBlock(api.database.db, game.gameId, drawer, 5);
    const before = await queueItems(api, game.gameId);
    const result = await generate(game.gameId);
    expect(result).toMatchObject({ appendedOutcomes: 5, blocksSealed: 0, readyBlocks: 3 });
    const items = await queueItems(api, game.gameId);
    expect(items.slice(0, 10)).toEqual(before);
    expect(items.slice(10).map((item) => parseQueueItem(item).blockId)).toEqual(Array(5).fill(orphan.blockId));
  });
});

describe("block.low_reserve", () => {
  it("is written once per drop below MIN_READY_BLOCKS, and again after a refill", async () => {
    const game = await registerTestGame(api);
    const firstBlock = await serveOutcomes(api, game, 5);
    expect(firstBlock.map((progress) => progress.enqueueGeneration)).toEqual([false, false, false, false, false]);
    expect(firstBlock.map((progress) => progress.started)).toEqual([true, false, false, false, false]);

    const secondBlock = await serveOutcomes(api, game, 5);
    expect(secondBlock[0]).toMatchObject({ started: true, enqueueGeneration: true });
    const [event] = await lowReserveEvents(game.gameId);
    expect(event?.payload).toEqual({
      id: event?.id,
      sequence: 1,
      type: "block.low_reserve",
      createdAt: expect.any(String),
      environment: "sandbox",
      data: { gameId: game.gameId, readyBlocks: 1, minReadyBlocks: 2, remainingOutcomes: 9 },
    });
    expect(event?.partnerId).toBe(game.partnerId);

    const thirdBlock = await serveOutcomes(api, game, 1);
    expect(thirdBlock[0]).toMatchObject({ started: true, enqueueGeneration: true });
    expect(await lowReserveEvents(game.gameId)).toHaveLength(1);

    await generate(game.gameId);
    await serveOutcomes(api, game, 4 + 5);
    expect(await lowReserveEvents(game.gameId)).toHaveLength(1);
    await serveOutcomes(api, game, 1);
    const after = await lowReserveEvents(game.gameId);
    expect(after).toHaveLength(2);
    expect(after.map((row) => (row.payload as { data: { readyBlocks: number } }).data.readyBlocks)).toEqual([1, 1]);
  });

  it("is written exactly once when many blocks start in parallel", async () => {
    const game = await registerTestGame(api, { fill: false });
    const { db, redis, keys, logger } = api.deps;
    // One outcome per block: every spin starts (and exhausts) a block, all at the same time.
    await fillReserve(
      { db, redis, keys, logger, targets: { blockSize: 1, minReadyBlocks: 2, targetReadyBlocks: 8 } },
      game.gameId,
    );
    const results = (await Promise.all(Array.from({ length: 8 }, () => serveOutcomes(api, game, 1)))).flat();
    expect(results.every((progress) => progress.started)).toBe(true);
    expect(results.filter((progress) => progress.enqueueGeneration)).toHaveLength(2);
    const written = await lowReserveEvents(game.gameId);
    expect(written.map((row) => (row.payload as { data: { readyBlocks: number } }).data.readyBlocks)).toEqual([1]);
  });

  it("is not written while a new game fills its first reserve", async () => {
    const game = await registerTestGame(api, { fill: false });
    const drawer = new OutcomeDrawer(assertValidParSheet(SAMPLE_PAR_SHEET));
    const sealed = await sealNextBlock(api.database.db, game.gameId, drawer, 5);
    // The first block of the first fill is loaded; the fill has not reached its target yet.
    await appendOutcomes(api.deps.redis, api.deps.keys, await api.gameOwner(game.gameId), queuedItems(sealed.draft), 1);
    const [progress] = await serveOutcomes(api, game, 1);
    expect(progress).toMatchObject({ started: true, enqueueGeneration: true });
    expect(await lowReserveEvents(game.gameId)).toEqual([]);
    const [row] = await api.database.db.select().from(games).where(eq(games.id, game.gameId));
    expect(row?.lowReserveArmed).toBe(false);
  });
});
