import { createGame, type Database } from "@outcomes/db";
import type { RedisKeys } from "@outcomes/queue";
import { fillReserve } from "@outcomes/reserve";
import type { Redis } from "ioredis";
import { reserveDeps } from "./seed.js";

export interface GenerationRun {
  outcomes: number;
  ms: number;
  outcomesPerSecond: number;
}

/**
 * Block generation as the blocks worker does it (`fillReserve`: draw, seal in Postgres, load into
 * the Redis list), for a fresh game each time: one block of `blockSize`, and a full fill to
 * `targetBlocks` ready blocks. The best of `repeats` runs of each (the machine is shared).
 */
export async function measureGeneration(
  db: Database,
  redis: Redis,
  keys: RedisKeys,
  owner: { partnerId: string; parSheetId: string },
  options: { blockSize: number; targetBlocks: number; repeats: number },
): Promise<{ oneBlock: GenerationRun; targetFill: GenerationRun }> {
  let games = 0;
  const run = async (blocks: number): Promise<GenerationRun> => {
    const game = await createGame(
      db,
      { partnerId: owner.partnerId, environment: "sandbox" },
      {
        parSheetId: owner.parSheetId,
        name: `generation ${++games}`,
        minWagerMicros: null,
        maxWagerMicros: 100_000_000,
        largeWinThresholdMicros: null,
      },
    );
    const started = performance.now();
    const filled = await fillReserve(reserveDeps(db, redis, keys, options.blockSize, blocks), game.id);
    const ms = performance.now() - started;
    return { outcomes: filled.outcomesSealed, ms, outcomesPerSecond: (filled.outcomesSealed / ms) * 1000 };
  };
  const best = async (blocks: number) => {
    const runs: GenerationRun[] = [];
    for (let i = 0; i < options.repeats; i++) runs.push(await run(blocks));
    return runs.reduce((a, b) => (b.outcomesPerSecond > a.outcomesPerSecond ? b : a));
  };
  return { oneBlock: await best(1), targetFill: await best(options.targetBlocks) };
}
