import { RETIRE_AFTER_MS, RETIRE_SETTLE_MS } from "@outcomes/blocks";
import { parseQueueItem, SAMPLE_PAR_SHEET, sampleParSheet } from "@outcomes/core";
import { type ParSheetDocument, PartnerClient, verifyRevealedBlock } from "@outcomes/sdk";
import { serveOutcomes } from "@outcomes/testkit/blocks";
import { testApiForFile } from "@outcomes/testkit/file-fixture";
import { registerTestGame, revealTestBlocks, type TestGame } from "@outcomes/testkit/games";
import { describe, expect, it } from "vitest";

const BLOCK_SIZE = 5;
const api = testApiForFile({ BLOCK_SIZE: String(BLOCK_SIZE), MIN_READY_BLOCKS: "1", TARGET_READY_BLOCKS: "3" });

/**
 * A game whose outcomes are taken in order: `plan` says, per outcome, whether a spin (over HTTP)
 * uses it or an API process takes it from the list (LPOP) and dies before its spin commits.
 */
async function play(game: TestGame, plan: ("spin" | "lost")[]) {
  const client = new PartnerClient({ apiKey: game.apiKey, baseUrl: api.baseUrl });
  const queue = api.deps.keys.outcomeQueue(await api.gameOwner(game.gameId));
  const lost: string[] = [];
  for (const step of plan) {
    if (step === "spin") await client.spin({ gameId: game.gameId, playerId: "lost-player", wagerUsd: 1 });
    else lost.push((await api.deps.redis.lpop(queue)) as string);
  }
  return { client, queue, lost };
}

const spins = (count: number) => Array<"spin">(count).fill("spin");

async function status(client: PartnerClient, game: TestGame, blockId: number) {
  return (await client.blocks.get(game.gameId, blockId)).status;
}

describe("entries lost between LPOP and the spin's commit, in a block a later block has passed", () => {
  it("are retired once gone from the queue RETIRE_AFTER_MS: the block is exhausted, then revealed with the lost entry's spinId null", async () => {
    const game = await registerTestGame(api);
    // Block 1's last entry is taken by a process that dies; block 2 is served on.
    const { client, queue, lost } = await play(game, [...spins(4), "lost", ...spins(2)]);
    const { blockId, index } = parseQueueItem(lost[0] as string);
    expect(index).toBe(BLOCK_SIZE - 1);
    const start = Date.now();

    expect(await revealTestBlocks(api, start)).toMatchObject({ lostBlocks: 0, waitingBlocks: 1, closedBlocks: 0 });
    // Still within the delay: not retired.
    const waiting = await revealTestBlocks(api, start + RETIRE_AFTER_MS - 1);
    expect(waiting).toMatchObject({ lostBlocks: 0, waitingBlocks: 1, closedBlocks: 0, retiredOutcomes: 0 });
    expect(await status(client, game, blockId)).toBe("serving");
    const retiredMarker = api.deps.keys.outcomesRetired(await api.gameOwner(game.gameId), blockId);
    expect(await api.deps.redis.exists(retiredMarker)).toBe(0);

    // Gone for the whole delay: the block ends (exhausted from then on) and a spin that fails with
    // the lost entry now drops it; the reveal waits RETIRE_SETTLE_MS more for spins in flight.
    const ending = start + RETIRE_AFTER_MS;
    expect(await revealTestBlocks(api, ending)).toMatchObject({ lostBlocks: 1, closedBlocks: 0, waitingBlocks: 1 });
    expect(await api.deps.redis.exists(retiredMarker)).toBe(1);
    expect(await status(client, game, blockId)).toBe("serving");
    expect(await revealTestBlocks(api, ending + RETIRE_SETTLE_MS - 1)).toMatchObject({ closedBlocks: 0 });

    const sweep = await revealTestBlocks(api, ending + RETIRE_SETTLE_MS);
    expect(sweep).toMatchObject({ lostBlocks: 0, closedBlocks: 1, revealedBlocks: 1, retiredOutcomes: 1 });
    const block = await client.blocks.get(game.gameId, blockId);
    expect(block.status).toBe("exhausted");
    const revealed = await client.blocks.entries(game.gameId, blockId);
    expect(verifyRevealedBlock(block, revealed, SAMPLE_PAR_SHEET)).toEqual({ ok: true, reason: null });
    expect(revealed.entries.map((entry) => entry.spinId === null)).toEqual([false, false, false, false, true]);
    expect(await api.deps.redis.lrange(queue, 0, -1)).not.toContain(lost[0]);
    // Block 2, still being served, is left alone.
    expect(await status(client, game, blockId + 1)).toBe("serving");
  });

  it("are not retired while back in the queue (a spin gave one back): the wait starts again once it is gone", async () => {
    const game = await registerTestGame(api);
    const { client, queue, lost } = await play(game, [...spins(4), "lost", ...spins(1)]);
    const item = lost[0] as string;
    const { blockId } = parseQueueItem(item);
    const start = Date.now();
    expect(await revealTestBlocks(api, start)).toMatchObject({ waitingBlocks: 1 });
    // Given back by a failed spin, and nobody played since: it waits at the front of the queue.
    await api.deps.redis.lpush(queue, item);
    expect(await revealTestBlocks(api, start + RETIRE_AFTER_MS)).toMatchObject({ lostBlocks: 0, waitingBlocks: 0 });
    expect(await revealTestBlocks(api, start + 3 * RETIRE_AFTER_MS)).toMatchObject({ lostBlocks: 0, closedBlocks: 0 });
    expect((await api.deps.redis.lrange(queue, 0, 0))[0]).toBe(item);
    expect(await status(client, game, blockId)).toBe("serving");

    // Taken again by a process that dies: gone from now on.
    await api.deps.redis.lpop(queue);
    const gone = start + 4 * RETIRE_AFTER_MS;
    expect(await revealTestBlocks(api, gone)).toMatchObject({ lostBlocks: 0, waitingBlocks: 1 });
    expect(await revealTestBlocks(api, gone + RETIRE_AFTER_MS - 1)).toMatchObject({ lostBlocks: 0 });
    expect(await revealTestBlocks(api, gone + RETIRE_AFTER_MS)).toMatchObject({ lostBlocks: 1 });
    expect(await revealTestBlocks(api, gone + RETIRE_AFTER_MS + RETIRE_SETTLE_MS)).toMatchObject({
      closedBlocks: 1,
      retiredOutcomes: 1,
    });
    expect(await status(client, game, blockId)).toBe("exhausted");
  });

  it("finite_pool: a block that lost a middle entry and its last is retired, and its cycle revealed whole", async () => {
    // A cycle of 10 (6 × T0, 4 × 2.4×: RTP exactly 0.96), cut into two blocks of 5.
    const sheet = sampleParSheet();
    sheet.drawMode = "finite_pool";
    sheet.prizeTiers = [
      { tier: "T0", multiplier: 0, weight: 6 },
      { tier: "T1", multiplier: 2.4, weight: 4 },
    ];
    sheet.combinations = [{ tier: "T1", symbols: ["LEMON", "LEMON", "LEMON"], weight: 1 }];
    const game = await registerTestGame(api, { sheet });
    // Block 1 loses index 2 and index 4; block 2 is spun dry.
    const { client, lost } = await play(game, ["spin", "spin", "lost", "spin", "lost", ...spins(BLOCK_SIZE)]);
    const { blockId } = parseQueueItem(lost[0] as string);
    expect(lost.map((item) => parseQueueItem(item).index)).toEqual([2, 4]);
    const start = Date.now();
    expect(await revealTestBlocks(api, start)).toMatchObject({ lostBlocks: 0, closedBlocks: 1, revealedBlocks: 0 });
    expect(await revealTestBlocks(api, start + RETIRE_AFTER_MS)).toMatchObject({ lostBlocks: 1 });
    const sweep = await revealTestBlocks(api, start + RETIRE_AFTER_MS + RETIRE_SETTLE_MS);
    expect(sweep).toMatchObject({ closedBlocks: 1, retiredOutcomes: 2, revealedCycles: 1, revealedBlocks: 2 });

    for (const id of [blockId, blockId + 1]) {
      const block = await client.blocks.get(game.gameId, id);
      expect(block).toMatchObject({ status: "exhausted", cycle: { cycleId: 1, revealed: true } });
      const revealed = await client.blocks.entries(game.gameId, id);
      expect(verifyRevealedBlock(block, revealed, sheet as ParSheetDocument)).toEqual({ ok: true, reason: null });
    }
    const revealed = await client.blocks.entries(game.gameId, blockId);
    expect(revealed.entries.filter((entry) => entry.spinId === null).map((entry) => entry.index)).toEqual([2, 4]);
  });

  it("a block whose first and last entries were lost (never marked serving) is retired the same way", async () => {
    const game = await registerTestGame(api);
    const { client, lost } = await play(game, ["lost", ...spins(3), "lost", "spin"]);
    const { blockId } = parseQueueItem(lost[0] as string);
    expect(await status(client, game, blockId)).toBe("ready");
    const start = Date.now();
    await revealTestBlocks(api, start);
    expect(await revealTestBlocks(api, start + RETIRE_AFTER_MS)).toMatchObject({ lostBlocks: 1 });
    expect(await revealTestBlocks(api, start + RETIRE_AFTER_MS + RETIRE_SETTLE_MS)).toMatchObject({
      closedBlocks: 1,
      retiredOutcomes: 2,
    });
    const block = await client.blocks.get(game.gameId, blockId);
    const revealed = await client.blocks.entries(game.gameId, blockId);
    expect(verifyRevealedBlock(block, revealed, SAMPLE_PAR_SHEET)).toEqual({ ok: true, reason: null });
    expect(revealed.entries.filter((entry) => entry.spinId === null).map((entry) => entry.index)).toEqual([0, 4]);
  });

  it("a spin that held the lost entry and commits before the reveal is listed with it: nothing is retired", async () => {
    const game = await registerTestGame(api);
    const { client, queue, lost } = await play(game, [...spins(4), "lost", "spin"]);
    const { blockId } = parseQueueItem(lost[0] as string);
    const start = Date.now();
    await revealTestBlocks(api, start);
    expect(await revealTestBlocks(api, start + RETIRE_AFTER_MS)).toMatchObject({ lostBlocks: 1 });
    // It was in flight all along (stalled past the wait, within the settle): it commits now.
    await api.deps.redis.lpush(queue, lost[0] as string);
    await serveOutcomes(api, game, 1);
    const sweep = await revealTestBlocks(api, start + RETIRE_AFTER_MS + RETIRE_SETTLE_MS);
    expect(sweep).toMatchObject({ closedBlocks: 1, retiredOutcomes: 0 });
    const block = await client.blocks.get(game.gameId, blockId);
    const revealed = await client.blocks.entries(game.gameId, blockId);
    expect(verifyRevealedBlock(block, revealed, SAMPLE_PAR_SHEET)).toEqual({ ok: true, reason: null });
    expect(revealed.entries.filter((entry) => entry.spinId === null)).toEqual([]);
  });

  it("two sweeps at once (two blocks workers) end the block and retire its entry once", async () => {
    const game = await registerTestGame(api);
    const { client, lost } = await play(game, [...spins(4), "lost", "spin"]);
    const { blockId } = parseQueueItem(lost[0] as string);
    const start = Date.now();
    await Promise.all([revealTestBlocks(api, start), revealTestBlocks(api, start)]);
    const ending = start + RETIRE_AFTER_MS;
    const ended = await Promise.all([revealTestBlocks(api, ending), revealTestBlocks(api, ending)]);
    expect(ended.map((sweep) => sweep.lostBlocks).sort()).toEqual([0, 1]);
    const closing = ending + RETIRE_SETTLE_MS;
    const closed = await Promise.all([revealTestBlocks(api, closing), revealTestBlocks(api, closing)]);
    expect(closed.map((sweep) => sweep.retiredOutcomes).sort()).toEqual([0, 1]);
    expect(closed.map((sweep) => sweep.closedBlocks).sort()).toEqual([0, 1]);
    const revealed = await client.blocks.entries(game.gameId, blockId);
    expect(revealed.entries.filter((entry) => entry.spinId === null).map((entry) => entry.index)).toEqual([4]);
  });
});
