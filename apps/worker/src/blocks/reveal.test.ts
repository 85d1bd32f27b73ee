import { RETIRE_AFTER_MS, RETIRE_SETTLE_MS } from "@outcomes/blocks";
import { blocks } from "@outcomes/db";
import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import { serveOutcomes } from "@outcomes/testkit/blocks";
import { registerTestGame, revealTestBlocks } from "@outcomes/testkit/games";
import { eventually, startRole } from "@outcomes/testkit/workers";
import { asc, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REVEAL_EVERY_MS, REVEAL_SCHEDULER_ID, startBlocksRole } from "./index.js";

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({ BLOCK_SIZE: "20", MIN_READY_BLOCKS: "1", TARGET_READY_BLOCKS: "2" });
});
afterAll(async () => {
  await api.close();
});

describe("the blocks role's reveal sweep", () => {
  it("is scheduled by the role and reveals a block within seconds of its last spin", async () => {
    const game = await registerTestGame(api);
    await serveOutcomes(api, game, 20);
    const role = await startRole(api, startBlocksRole);
    try {
      const schedulers = await api.deps.producers.queues.blocks.getJobSchedulers();
      expect(schedulers.map((scheduler) => [scheduler.key, scheduler.every])).toContainEqual([
        REVEAL_SCHEDULER_ID,
        REVEAL_EVERY_MS,
      ]);
      const [first, second] = await eventually(
        async () => {
          const rows = await api.database.db
            .select()
            .from(blocks)
            .where(eq(blocks.gameId, game.gameId))
            .orderBy(asc(blocks.sequence));
          return rows[0]?.revealedAt ? rows : null;
        },
        3 * REVEAL_EVERY_MS + 5_000,
      );
      expect(first?.closedAt).not.toBeNull();
      expect(second).toMatchObject({ closedAt: null, revealedAt: null });
    } finally {
      await role.close();
    }
  });
});

describe("a block whose retirement fails", () => {
  it("does not stop the sweep for other partners' blocks; the sweep then fails to run again", async () => {
    const [broken, healthy] = [await registerTestGame(api), await registerTestGame(api)];
    // Each game's first block: one entry stranded (taken, never spun), every other one spun.
    for (const game of [broken, healthy]) {
      await api.deps.redis.lpop(api.deps.keys.outcomeQueue(await api.gameOwner(game.gameId)));
      await serveOutcomes(api, game, 19);
    }
    const firstBlock = async (gameId: number) =>
      (await api.database.db.select().from(blocks).where(eq(blocks.gameId, gameId)).orderBy(asc(blocks.sequence)))[0]!;
    // The record no longer reads: its retirement throws.
    await api.database.sql`update blocks set entries = '\\x00' where id = ${(await firstBlock(broken.gameId)).id}`;

    const exhaustedAt = (await firstBlock(healthy.gameId)).exhaustedAt!.getTime();
    for (const now of [exhaustedAt + RETIRE_AFTER_MS + 1, exhaustedAt + RETIRE_AFTER_MS + RETIRE_SETTLE_MS + 2]) {
      await expect(revealTestBlocks(api, now)).rejects.toThrow(/1 of \d+ blocks of the reveal sweep failed/);
    }
    expect(await firstBlock(healthy.gameId)).toMatchObject({
      closedAt: expect.any(Date),
      revealedAt: expect.any(Date),
    });
    expect(await firstBlock(broken.gameId)).toMatchObject({ closedAt: null, revealedAt: null });
  });
});
