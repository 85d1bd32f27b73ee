import { events } from "@outcomes/db";
import { testApiForFile } from "@outcomes/testkit/file-fixture";
import { addBlock, createGame, type FixtureGame, spin } from "@outcomes/testkit/spin-path";
import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";

/**
 * A PATCH of a game holds for every spin sent after its answer on the process that wrote it, and on
 * every other process within 1 s (CONTRACT §2). Each check warms the caches with a spin right before
 * the change, so passing proves the invalidation, not the cache's expiry.
 */
const first = testApiForFile();
const second = testApiForFile({}, { shareWith: first });

async function warmGame(): Promise<FixtureGame & { apiKey: string }> {
  const { partnerId, apiKey } = await first.createPartner();
  const game = await createGame(first, partnerId, { maxWagerUsd: 100, largeWinThresholdUsd: 1000 });
  await addBlock(first, game.gameId, Array(20).fill(["T3", 10]));
  for (const api of [first, second]) {
    expect((await spin(api, apiKey, { gameId: game.gameId, playerId: "p1", wagerUsd: 1 })).status).toBe(200);
  }
  return { ...game, apiKey };
}

const patch = (game: FixtureGame & { apiKey: string }, json: unknown) =>
  first.request(`/api/partner/v1/games/${game.gameId}`, { method: "PATCH", apiKey: game.apiKey, json });

async function largeWins(partnerId: string): Promise<number> {
  const rows = await first.database.db
    .select({ id: events.id })
    .from(events)
    .where(and(eq(events.partnerId, partnerId), eq(events.type, "spin.large_win")));
  return rows.length;
}

describe("game changes take effect at once", () => {
  it("a spin right after deactivation is refused (KS-4202) on the same process, and on another within 1 s", async () => {
    const game = await warmGame();
    expect((await patch(game, { isActive: false })).status).toBe(200);
    const changedAt = Date.now();
    const own = await spin(first, game.apiKey, { gameId: game.gameId, playerId: "p1", wagerUsd: 1 });
    expect([own.status, own.body.errorCode]).toEqual([400, "KS-4202"]);
    let other = await spin(second, game.apiKey, { gameId: game.gameId, playerId: "p2", wagerUsd: 1 });
    while (other.body.errorCode !== "KS-4202" && Date.now() - changedAt < 2000) {
      other = await spin(second, game.apiKey, { gameId: game.gameId, playerId: "p2", wagerUsd: 1 });
    }
    expect(other.body.errorCode).toBe("KS-4202");
    expect(Date.now() - changedAt).toBeLessThan(1000);
  });

  it("a lower maxWagerUsd refuses the next spin above it (KS-4103)", async () => {
    const game = await warmGame();
    expect((await patch(game, { maxWagerUsd: 2 })).status).toBe(200);
    const refused = await spin(first, game.apiKey, { gameId: game.gameId, playerId: "p1", wagerUsd: 5 });
    expect([refused.status, refused.body.errorCode]).toEqual([400, "KS-4103"]);
  });

  it("a new largeWinThresholdUsd decides the next spin's spin.large_win", async () => {
    const game = await warmGame();
    const before = await largeWins(game.partnerId);
    expect((await patch(game, { largeWinThresholdUsd: 5 })).status).toBe(200);
    const won = await spin(first, game.apiKey, { gameId: game.gameId, playerId: "p1", wagerUsd: 1 });
    expect(won.body.outcome.payoutUsd).toBe(10);
    expect(await largeWins(game.partnerId)).toBe(before + 1);
  });
});
