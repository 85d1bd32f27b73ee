import { parseQueueItem, SAMPLE_PAR_SHEET } from "@outcomes/core";
import { PartnerClient, type SpinResult, verifyRevealedBlock, verifySpinProof } from "@outcomes/sdk";
import { testApiForFile } from "@outcomes/testkit/file-fixture";
import { fillTestGameQueue, registerTestGame, revealTestBlocks } from "@outcomes/testkit/games";
import { asRead } from "@outcomes/testkit/spin-path";
import { describe, expect, it } from "vitest";

/**
 * A void is fairness-neutral and visible as such (CONTRACT §13): the voided spin's outcome stays
 * used (never served again, not even from a queue rebuilt from Postgres), its proof verifies with
 * the SDK before and after the reveal, and the revealed entries show it with `voided: true`, also
 * for a void made after a page of them was served (and kept by the API).
 */
const BLOCK_SIZE = 12;
const api = testApiForFile({ BLOCK_SIZE: String(BLOCK_SIZE), MIN_READY_BLOCKS: "1", TARGET_READY_BLOCKS: "2" });

async function spinMany(client: PartnerClient, gameId: number, count: number): Promise<SpinResult[]> {
  const spins: SpinResult[] = [];
  for (let i = 0; i < count; i++) spins.push(await client.spin({ gameId, playerId: "fair-voider", wagerUsd: 1 }));
  return spins;
}

describe("a voided spin's outcome", () => {
  it("stays used and provable, and the reveal shows it voided", async () => {
    const game = await registerTestGame(api);
    const client = new PartnerClient({ apiKey: game.apiKey, baseUrl: api.baseUrl });
    const first = (await client.blocks.list(game.gameId)).blocks.find((block) => block.sequence === 1)!;

    const early = await spinMany(client, game.gameId, 5);
    expect(early.map((spin) => spin.fairness)).toEqual(
      [0, 1, 2, 3, 4].map((index) => ({ blockId: first.blockId, index })),
    );
    const voided = await client.voidSpin(early[2]!.spinId, { reason: "wallet refused the debit" });
    expect(voided).toEqual({
      ...asRead(early[2]!),
      voided: { voidedAt: expect.any(String), reason: "wallet refused the debit" },
    });
    expect(await client.getSpin(voided.spinId)).toEqual(voided);
    const sealed = await client.blocks.get(game.gameId, first.blockId);
    expect(verifySpinProof(voided, await client.spinProof(voided.spinId), sealed)).toEqual({ ok: true, reason: null });

    // The queue lost and rebuilt from Postgres: the voided entry is still used, so it is not queued again.
    const owner = await api.gameOwner(game.gameId);
    const queueKey = api.deps.keys.outcomeQueue(owner);
    await api.deps.redis.del(queueKey, api.deps.keys.outcomesLoadedThrough(owner));
    await fillTestGameQueue(api, game.gameId);
    const queued = (await api.deps.redis.lrange(queueKey, 0, -1)).map(parseQueueItem);
    expect(queued.filter((item) => item.blockId === first.blockId).map((item) => item.index)).toEqual([
      5, 6, 7, 8, 9, 10, 11,
    ]);

    const late = await spinMany(client, game.gameId, BLOCK_SIZE - 5);
    const served = [...early, ...late].map((spin) => `${spin.fairness?.blockId}.${spin.fairness?.index}`);
    expect(new Set(served).size).toBe(BLOCK_SIZE);
    expect(late.map((spin) => spin.fairness?.index)).toEqual([5, 6, 7, 8, 9, 10, 11]);

    expect(await revealTestBlocks(api)).toMatchObject({ revealedBlocks: 1 });
    const block = await client.blocks.get(game.gameId, first.blockId);
    expect(block.seed).not.toBeNull();
    const revealed = await client.blocks.entries(game.gameId, first.blockId);
    expect(revealed.entries.map((entry) => [entry.spinId, entry.voided])).toEqual(
      [...early, ...late].map((spin) => [spin.spinId, spin.spinId === voided.spinId]),
    );
    expect(verifyRevealedBlock(block, revealed, SAMPLE_PAR_SHEET)).toEqual({ ok: true, reason: null });
    // Once revealed, the proof's salt is checked against the seed too.
    expect(verifySpinProof(voided, await client.spinProof(voided.spinId), block)).toEqual({ ok: true, reason: null });

    // A page served (and kept by this API process) before a void shows that void afterwards.
    const page = () => client.blocks.entriesPage(game.gameId, first.blockId, { page: 2, limit: 4 });
    expect((await page()).entries.map((entry) => entry.voided)).toEqual([false, false, false, false]);
    await client.voidSpin(late[0]!.spinId, { reason: "session closed" });
    expect((await page()).entries.map((entry) => [entry.index, entry.voided])).toEqual([
      [4, false],
      [5, true],
      [6, false],
      [7, false],
    ]);
  });
});
