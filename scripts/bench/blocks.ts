import { fillReserve } from "@outcomes/blocks";
import { createGame, type Database } from "@outcomes/db";
import type { RedisClient, RedisKeys } from "@outcomes/queue";
import { reserveDeps } from "./seed.js";

export interface GenerationRun {
  outcomes: number;
  ms: number;
  outcomesPerSecond: number;
}

/** The median run, and every run's rate in outcomes/s in the order they ran. */
export type MedianRun = GenerationRun & { runsPerSecond: number[] };

/**
 * Block generation as the blocks worker does it (`fillReserve`: draw, seal in Postgres, load into
 * the Redis list), for a fresh game each time: one block of `blockSize`, and a full fill to
 * `targetBlocks` ready blocks. The median of `repeats` runs of each (all runs are kept too: the
 * machine is shared).
 */
export async function measureGeneration(
  db: Database,
  redis: RedisClient,
  keys: RedisKeys,
  owner: { partnerId: string; parSheetId: string },
  options: { blockSize: number; targetBlocks: number; repeats: number },
): Promise<{ oneBlock: MedianRun; targetFill: MedianRun }> {
  let games = 0;
  const run = async (blocks: number): Promise<GenerationRun> => {
    const game = await db.transaction((tx) =>
      createGame(
        tx,
        { partnerId: owner.partnerId, environment: "sandbox" },
        {
          parSheetId: owner.parSheetId,
          name: `generation ${++games}`,
          minWagerMicros: null,
          maxWagerMicros: 100_000_000,
          largeWinThresholdMicros: null,
        },
      ),
    );
    const started = performance.now();
    const filled = await fillReserve(reserveDeps(db, redis, keys, options.blockSize, blocks), game.id);
    const ms = performance.now() - started;
    return { outcomes: filled.outcomesSealed, ms, outcomesPerSecond: (filled.outcomesSealed / ms) * 1000 };
  };
  const median = async (blocks: number) => {
    const runs: GenerationRun[] = [];
    for (let i = 0; i < options.repeats; i++) runs.push(await run(blocks));
    const sorted = [...runs].sort((a, b) => a.outcomesPerSecond - b.outcomesPerSecond);
    const middle = sorted[Math.floor(sorted.length / 2)] as GenerationRun;
    return { ...middle, runsPerSecond: runs.map((each) => Math.round(each.outcomesPerSecond)) };
  };
  return { oneBlock: await median(1), targetFill: await median(options.targetBlocks) };
}
