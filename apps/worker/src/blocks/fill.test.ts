import { fillReserve } from "@outcomes/blocks";
import {
  decodeBlockEntries,
  EntryCodec,
  encodeCompactItem,
  payoutMicros,
  sampleParSheet,
  verifyBlock,
} from "@outcomes/core";
import { blocks, games, poolCycles } from "@outcomes/db";
import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import { recordingJob } from "@outcomes/testkit/blocks";
import { registerTestGame } from "@outcomes/testkit/games";
import { queueItems } from "@outcomes/testkit/spin-path";
import { eventually, startRole } from "@outcomes/testkit/workers";
import { asc, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startBlocksRole } from "./index.js";
import { blocksProcessor } from "./process.js";

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({ BLOCK_SIZE: "200", MIN_READY_BLOCKS: "2", TARGET_READY_BLOCKS: "3" });
});
afterAll(async () => {
  await api.close();
});

const generate = (gameId: number, job = recordingJob().job) => blocksProcessor(api.deps)({ gameId }, job);

async function blockRows(gameId: number) {
  return api.database.db.select().from(blocks).where(eq(blocks.gameId, gameId)).orderBy(asc(blocks.sequence));
}

/** The queue items a block's stored entries must have produced, in serving order: each entry's compact item. */
function expectedItems(block: { id: number; entries: Buffer }): string[] {
  const { codec, size, bodyStart } = EntryCodec.read(block.entries);
  return Array.from({ length: size }, (_, index) => {
    const at = bodyStart + index * codec.entryBytes;
    return encodeCompactItem(block.id, index, block.entries.subarray(at, at + codec.entryBytes));
  });
}

describe("blocks.generate", () => {
  it("seals each block with a commitment that verifies, then loads it: the list holds TARGET blocks", async () => {
    const game = await registerTestGame(api, { fill: false });
    const { job, progress, logs } = recordingJob();
    const result = await generate(game.gameId, job);
    expect(result).toMatchObject({ blocksSealed: 3, outcomesSealed: 600, readyBlocks: 3, targetReadyBlocks: 3 });
    expect(progress).toHaveLength(3); // one per block loaded: the three are one turn of the lock
    expect(progress[0]).toMatchObject({ blocksSealed: 1, readyBlocks: 1, targetReadyBlocks: 3 });
    expect(logs[0]).toContain("sealed 3 blocks (600 outcomes); 3/3 ready");

    const rows = await blockRows(game.gameId);
    expect(rows.map((row) => [row.sequence, row.status, row.size, row.cycle])).toEqual([
      [1, "ready", 200, 0],
      [2, "ready", 200, 0],
      [3, "ready", 200, 0],
    ]);
    for (const row of rows) expect(verifyBlock(row.entries, row.commitment)).toBe(true);
    expect(await queueItems(api, game.gameId)).toEqual(rows.flatMap(expectedItems));
    expect(await api.deps.redis.get(api.deps.keys.outcomesLoadedThrough(await api.gameOwner(game.gameId)))).toBe("3");
    const [armed] = await api.database.db.select().from(games).where(eq(games.id, game.gameId));
    expect(armed?.lowReserveArmed).toBe(true);

    const again = await generate(game.gameId);
    expect(again.blocksSealed).toBe(0);
    expect(await queueItems(api, game.gameId)).toHaveLength(600);
  });

  it("lets two workers fill one game at once without a duplicate sequence or outcome", async () => {
    const game = await registerTestGame(api, { fill: false });
    const [first, second] = await Promise.all([generate(game.gameId), generate(game.gameId)]);
    expect((first?.blocksSealed ?? 0) + (second?.blocksSealed ?? 0)).toBe(3);
    const rows = await blockRows(game.gameId);
    expect(rows.map((row) => row.sequence)).toEqual([1, 2, 3]);
    const items = await queueItems(api, game.gameId);
    expect(items).toEqual(rows.flatMap(expectedItems));
    expect(new Set(items).size).toBe(600);
  });

  it("stops a turn whose load fails: the marker never passes a block missing from the list, the next job loads the rest", async () => {
    const game = await registerTestGame(api, { fill: false });
    const { db, redis, keys, logger } = api.deps;
    // The second block's MULTI/EXEC is refused, as when Redis goes away mid-turn: nothing of it is applied.
    let transactions = 0;
    const failing = new Proxy(redis, {
      get(target, property) {
        if (property === "multi") {
          return () => {
            const tx = target.multi();
            if (++transactions === 2) tx.exec = async () => Promise.reject(new Error("Connection is closed."));
            return tx;
          };
        }
        const value = Reflect.get(target, property, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const targets = { blockSize: 200, minReadyBlocks: 2, targetReadyBlocks: 5 };
    await expect(fillReserve({ db, redis: failing, keys, logger, targets }, game.gameId)).rejects.toThrow(
      "Connection is closed.",
    );
    const owner = await api.gameOwner(game.gameId);
    const sealed = await blockRows(game.gameId);
    // Blocks 1 and 2 at least were sealed (the second is the one whose load failed); only block 1 is in the list.
    expect(sealed.length).toBeGreaterThanOrEqual(2);
    expect(await redis.get(keys.outcomesLoadedThrough(owner))).toBe("1");
    expect(await queueItems(api, game.gameId)).toEqual(expectedItems(sealed[0] as (typeof sealed)[number]));

    const retried = await fillReserve({ db, redis, keys, logger, targets }, game.gameId);
    expect(retried.appendedOutcomes).toBe((sealed.length - 1) * 200);
    const rows = await blockRows(game.gameId);
    expect(rows.map((row) => row.sequence)).toEqual([1, 2, 3, 4, 5]);
    expect(await queueItems(api, game.gameId)).toEqual(rows.flatMap(expectedItems));
    expect(await redis.get(keys.outcomesLoadedThrough(owner))).toBe("5");
  });

  it("refuses a job for a game that does not exist without retrying", async () => {
    await expect(generate(987_654)).rejects.toMatchObject({ name: "UnrecoverableError" });
  });

  it("runs as the blocks role: registering a game fills its queue through BullMQ", async () => {
    const role = await startRole(api, startBlocksRole);
    try {
      const game = await registerTestGame(api, { fill: false });
      await eventually(async () => (await queueItems(api, game.gameId)).length === 600);
      expect((await blockRows(game.gameId)).map((row) => row.status)).toEqual(["ready", "ready", "ready"]);
    } finally {
      await role.close();
    }
  });
});

describe("finite_pool", () => {
  /** Cycle of 10: T0 ×7, T1 (2×) ×2, T2 (5×) ×1: RTP exactly 0.9. */
  function tinyPool() {
    const sheet = sampleParSheet();
    sheet.drawMode = "finite_pool";
    sheet.prizeTiers = [
      { tier: "T0", multiplier: 0, weight: 7 },
      { tier: "T1", multiplier: 2, weight: 2 },
      { tier: "T2", multiplier: 5, weight: 1 },
    ];
    sheet.combinations = [
      { tier: "T1", symbols: ["LEMON", "LEMON", "LEMON"], weight: 1 },
      { tier: "T2", symbols: ["BELL", "BELL", "BELL"], weight: 1 },
    ];
    sheet.certifiedRtp = 0.9;
    return sheet;
  }

  it("cuts blocks in order from stored cycles, cycle after cycle, each paying exactly its RTP", async () => {
    const game = await registerTestGame(api, { sheet: tinyPool(), fill: false });
    const { db, redis, keys, logger } = api.deps;
    await fillReserve(
      { db, redis, keys, logger, targets: { blockSize: 4, minReadyBlocks: 2, targetReadyBlocks: 7 } },
      game.gameId,
    );
    const rows = await blockRows(game.gameId);
    expect(rows.map((row) => [row.cycle, row.cycleOffset, row.size])).toEqual([
      [1, 0, 4],
      [1, 4, 4],
      [1, 8, 2],
      [2, 0, 4],
      [2, 4, 4],
      [2, 8, 2],
      [3, 0, 4],
    ]);
    const cycles = await db.select().from(poolCycles).where(eq(poolCycles.gameId, game.gameId));
    expect(cycles.map((cycle) => cycle.tiers.length)).toEqual([10, 10, 10]);
    for (const cycle of [1, 2]) {
      const outcomes = rows.filter((row) => row.cycle === cycle).flatMap((row) => decodeBlockEntries(row.entries));
      const stored = cycles.find((row) => row.cycle === cycle)?.tiers;
      expect(outcomes.map((outcome) => `T${outcome.tier.slice(1)}`)).toEqual([...(stored ?? [])].map((t) => `T${t}`));
      const counts = ["T0", "T1", "T2"].map((tier) => outcomes.filter((outcome) => outcome.tier === tier).length);
      expect(counts).toEqual([7, 2, 1]);
      const paid = outcomes.reduce((sum, outcome) => sum + payoutMicros(1_000_000, outcome.multiplierMillionths), 0);
      expect(paid).toBe(9_000_000);
    }
    expect(await queueItems(api, game.gameId)).toEqual(rows.flatMap(expectedItems));
  });
});
