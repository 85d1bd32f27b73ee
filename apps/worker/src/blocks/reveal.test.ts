import { blocks } from "@outcomes/db";
import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import { serveOutcomes } from "@outcomes/testkit/blocks";
import { registerTestGame } from "@outcomes/testkit/games";
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
