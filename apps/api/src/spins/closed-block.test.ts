import { spinOutcomes } from "@outcomes/db";
import { testApiForFile } from "@outcomes/testkit/file-fixture";
import { addBlock, type FixtureGame, partnerWithGame, spin, waitForLockWaiters } from "@outcomes/testkit/spin-path";
import { eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";

/**
 * An outcome of a closed block (its unused entries retired, its seed about to be shown) is never
 * used, whenever the spin that took it commits: the spin takes the next outcome instead.
 */
const api = testApiForFile();
let apiKey: string;
let game: FixtureGame;

beforeAll(async () => {
  ({ apiKey, game } = await partnerWithGame(api));
});

const play = (idempotencyKey?: string) =>
  spin(api, apiKey, { gameId: game.gameId, playerId: "p", wagerUsd: 1 }, idempotencyKey);

async function usedEntries(blockId: number) {
  return api.database.db.select().from(spinOutcomes).where(eq(spinOutcomes.blockId, blockId));
}

describe("an outcome of a closed block", () => {
  it.each([
    ["a plain spin", undefined],
    ["a keyed spin", "closed-block-key"],
  ])("is dropped by %s, which is served the next outcome", async (_, idempotencyKey) => {
    const [stale] = await addBlock(api, game.gameId, [["T1", 2]]);
    const [next] = await addBlock(api, game.gameId, [["T0", 0]]);
    await api.database.sql`update blocks set closed_at = now() where id = ${stale!.blockId}`;

    const answer = await play(idempotencyKey);
    expect([answer.status, answer.body.fairness]).toEqual([200, { blockId: next!.blockId, index: 0 }]);
    expect(await usedEntries(stale!.blockId)).toEqual([]);
  });

  it("is dropped by a spin that arrives while the block is being closed", async () => {
    const [stale] = await addBlock(api, game.gameId, [["T1", 2]]);
    const [next] = await addBlock(api, game.gameId, [["T0", 0]]);
    const answer = await api.database.sql.begin(async (tx) => {
      // What the reveal sweep's close holds until it commits.
      await tx`select id from blocks where id = ${stale!.blockId} for update`;
      await tx`update blocks set closed_at = now() where id = ${stale!.blockId}`;
      const spinning = play();
      await waitForLockWaiters(tx, 1);
      return { spinning };
    });
    const spun = await answer.spinning;
    expect([spun.status, spun.body.fairness]).toEqual([200, { blockId: next!.blockId, index: 0 }]);
    expect(await usedEntries(stale!.blockId)).toEqual([]);
  });
});
