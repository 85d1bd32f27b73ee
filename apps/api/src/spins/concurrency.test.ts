import { players, spins } from "@outcomes/db";
import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import { addBlock, createGame, type OutcomeSpec, queueLength, spin } from "@outcomes/testkit/spin-path";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const SPINS = 500;
const PLAYERS = 20;
const TIERS: OutcomeSpec[] = [
  ["T0", 0],
  ["T1", 2],
  ["T2", "1.5"],
  ["T3", 10],
  ["T4", "0.333333"],
];

// Group commit as configured by default, and off (each spin commits alone).
describe.each([
  ["batched (default)", {}],
  ["batch size 1", { SPIN_BATCH_MAX_SIZE: "1" }],
])("500 parallel spins across 20 players, %s", (_, env: Record<string, string>) => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi(env);
  });
  afterAll(async () => {
    await api.close();
  });

  it("uses every outcome once and keeps each balance equal to the sum of its spins", async () => {
    const { partnerId, apiKey } = await api.createPartner();
    const game = await createGame(api, partnerId, { maxWagerUsd: 1000 });
    // Two blocks, more outcomes than spins, so the queue must end exactly SPINS shorter.
    const specs = Array.from({ length: 300 }, (_, i) => TIERS[i % TIERS.length] as OutcomeSpec);
    await addBlock(api, game.gameId, specs);
    await addBlock(api, game.gameId, specs);
    const before = await queueLength(api, game.gameId);

    const responses = await Promise.all(
      Array.from({ length: SPINS }, (_, i) =>
        spin(api, apiKey, { gameId: game.gameId, playerId: `player-${i % PLAYERS}`, wagerUsd: (1 + (i % 7)) / 10 }),
      ),
    );
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
    expect(await queueLength(api, game.gameId)).toBe(before - SPINS);

    const { db } = api.database;
    const rows = await db.select().from(spins).where(eq(spins.gameId, game.gameId));
    expect(rows).toHaveLength(SPINS);
    expect(new Set(rows.map((row) => `${row.blockId}:${row.outcomeIndex}`)).size).toBe(SPINS);
    expect(new Set(responses.map((r) => r.body.spinId)).size).toBe(SPINS);

    const playerRows = await db.select().from(players).where(eq(players.partnerId, partnerId));
    expect(playerRows).toHaveLength(PLAYERS);
    for (const player of playerRows) {
      const own = rows.filter((row) => row.playerId === player.id);
      const net = own.reduce((sum, row) => sum + row.payoutMicros - row.wagerMicros, 0);
      expect([player.externalId, player.balanceMicros, player.totalSpins]).toEqual([
        player.externalId,
        net,
        own.length,
      ]);
      expect(player.totalWageredMicros).toBe(own.reduce((sum, row) => sum + row.wagerMicros, 0));
      expect(player.totalPaidMicros).toBe(own.reduce((sum, row) => sum + row.payoutMicros, 0));
      // Every recorded balance is its predecessor's plus its own net: the spins form one chain
      // from 0 to the final balance, so no update was lost or applied twice.
      expect(formsOneChain(0, player.balanceMicros, own)).toBe(true);
    }
  });
});

type Link = { balanceAfterMicros: number; payoutMicros: number; wagerMicros: number };

/** Whether the spins can be ordered so each starts from the balance the previous one left. */
function formsOneChain(from: number, to: number, links: Link[]): boolean {
  if (links.length === 0) return from === to;
  return links.some(
    (link, i) =>
      link.balanceAfterMicros - (link.payoutMicros - link.wagerMicros) === from &&
      formsOneChain(
        link.balanceAfterMicros,
        to,
        links.filter((_, j) => j !== i),
      ),
  );
}
