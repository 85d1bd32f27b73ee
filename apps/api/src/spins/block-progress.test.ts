import { encodeQueuedOutcome } from "@outcomes/core";
import { blocks, events, games } from "@outcomes/db";
import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import { parseExposition } from "@outcomes/testkit/metrics";
import { addBlock, createGame, spin, waitForLockWaiters, windowFor } from "@outcomes/testkit/spin-path";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({ MIN_READY_BLOCKS: "2" });
});
afterAll(async () => {
  await api.close();
});

async function statuses(gameId: number) {
  const rows = await api.database.db
    .select({ sequence: blocks.sequence, status: blocks.status })
    .from(blocks)
    .where(eq(blocks.gameId, gameId))
    .orderBy(blocks.sequence);
  return rows.map((row) => row.status);
}

async function generationJobs(gameId: number) {
  const jobs = await api.deps.producers.queues.blocks.getJobs(["waiting", "prioritized", "delayed"]);
  return jobs.filter((job) => job.name === "blocks.generate" && job.data.gameId === gameId).length;
}

describe("block bookkeeping in the spin path", () => {
  it("starts a block with its first outcome and exhausts it with its last", async () => {
    const { partnerId, apiKey } = await api.createPartner();
    const game = await createGame(api, partnerId);
    for (let i = 0; i < 3; i++) {
      await addBlock(api, game.gameId, [
        ["T0", 0],
        ["T1", 2],
        ["T0", 0],
      ]);
    }
    const play = () => spin(api, apiKey, { gameId: game.gameId, playerId: "p", wagerUsd: 1 });
    expect(await statuses(game.gameId)).toEqual(["ready", "ready", "ready"]);
    await play();
    expect(await statuses(game.gameId)).toEqual(["serving", "ready", "ready"]);
    await play();
    expect(await statuses(game.gameId)).toEqual(["serving", "ready", "ready"]);
    expect(await generationJobs(game.gameId)).toBe(0);
    await play();
    await play();
    // Two ready blocks were left when the first started; now one: below MIN_READY_BLOCKS.
    expect(await statuses(game.gameId)).toEqual(["exhausted", "serving", "ready"]);
    // Requested after the commit, without holding up the answer.
    await vi.waitFor(async () => expect(await generationJobs(game.gameId)).toBe(1));
  });

  it("writes one block.low_reserve per drop when the reserve was armed", async () => {
    const { partnerId, apiKey } = await api.createPartner();
    const game = await createGame(api, partnerId);
    await addBlock(api, game.gameId, [["T0", 0]]);
    await addBlock(api, game.gameId, [["T0", 0]]);
    await api.database.db.update(games).set({ lowReserveArmed: true }).where(eq(games.id, game.gameId));
    for (let i = 0; i < 2; i++) {
      const response = await spin(api, apiKey, { gameId: game.gameId, playerId: "p", wagerUsd: 1 });
      expect(response.status).toBe(200);
    }
    const written = await api.database.db.select().from(events).where(eq(events.partnerId, partnerId));
    expect(written.map((event) => event.type)).toEqual(["block.low_reserve"]);
    expect((written[0]!.payload as any).data).toMatchObject({ gameId: game.gameId, readyBlocks: 1, minReadyBlocks: 2 });
  });
});

describe("a block-boundary batch chosen as a deadlock's victim", () => {
  it("runs again and answers 200, instead of failing its spins", async () => {
    const { partnerId, apiKey } = await api.createPartner();
    const game = await createGame(api, partnerId);
    await addBlock(api, game.gameId, [["T0", 0]]);
    const [second] = await addBlock(api, game.gameId, [
      ["T0", 0],
      ["T0", 0],
    ]);
    const play = () => spin(api, apiKey, { gameId: game.gameId, playerId: "p", wagerUsd: 1 });
    expect((await play()).status).toBe(200); // the player exists now; block 1 is exhausted

    // Another transaction holds the block the next spin starts, then waits for that spin's player
    // row (and commits once it has it): a lock cycle. Its own deadlock_timeout is long, so Postgres breaks the cycle by rolling
    // the spin's batch back.
    const { spinning } = await api.database.sql.begin(async (tx) => {
      await tx`set local deadlock_timeout = '10s'`;
      // NO KEY UPDATE: the spin's own insert (its key-share check of the block) passes; its block
      // bookkeeping, after the player's row, waits.
      await tx`select 1 from blocks where id = ${second!.blockId} for no key update`;
      const spinning = play();
      await waitForLockWaiters(tx, 1);
      await tx`update players set external_id = external_id where partner_id = ${partnerId} and external_id = 'p'`;
      return { spinning };
    });
    const answer = await spinning;
    expect([answer.status, JSON.stringify(answer.body)]).toEqual([200, expect.anything()]);
    expect(await statuses(game.gameId)).toEqual(["exhausted", "serving"]);
    const spins = await api.database.sql`select count(*)::int as n from spins where partner_id = ${partnerId}`;
    expect(spins[0]?.n).toBe(2);
  });
});

describe("bursts over small blocks", () => {
  /** Conflict reruns (deadlock victims) counted by this process's /metrics. */
  async function conflictReruns(): Promise<number> {
    const response = await fetch(`${api.metricsUrl}/metrics`);
    const sample = parseExposition(await response.text()).find(
      (s) => s.name === "outcomes_spin_batch_reruns_total" && s.labels.reason === "conflict",
    );
    return sample?.value ?? 0;
  }

  it("never deadlock: 20 bursts of 400 spins over 2-outcome blocks", { timeout: 240_000 }, async () => {
    const { partnerId, apiKey } = await api.createPartner();
    const game = await createGame(api, partnerId, { maxWagerUsd: 100 });
    const before = await conflictReruns();
    const statuses: Record<number, number> = {};
    for (let burst = 0; burst < 20; burst++) {
      await addTwoOutcomeBlocks(game.gameId, 200);
      const answers = await Promise.all(
        Array.from({ length: 400 }, (_, i) =>
          spin(api, apiKey, { gameId: game.gameId, playerId: `p${burst}-${i}`, wagerUsd: 1 }),
        ),
      );
      for (const { status } of answers) statuses[status] = (statuses[status] ?? 0) + 1;
    }
    expect(statuses).toEqual({ 200: 20 * 400 });
    expect((await conflictReruns()) - before).toBe(0);
  });

  /** `count` blocks of two T0 outcomes, sealed in one statement and queued in one RPUSH. */
  async function addTwoOutcomeBlocks(gameId: number, count: number): Promise<void> {
    const rows = await api.database.sql<{ id: string }[]>`
      insert into blocks (game_id, sequence, size, entries, commitment)
      select ${gameId}, s, 2, convert_to('[["T0",0],["T0",0]]', 'UTF8'), 'fixture'
      from generate_series(
        (select coalesce(max(sequence), 0) + 1 from blocks where game_id = ${gameId}),
        (select coalesce(max(sequence), 0) + ${count} from blocks where game_id = ${gameId})) s
      order by s
      returning id`;
    const items = rows.flatMap(({ id }) =>
      [0, 1].map((index) =>
        encodeQueuedOutcome({
          blockId: Number(id),
          index,
          tier: "T0",
          multiplierMillionths: 0,
          reelSymbols: windowFor("T0"),
        }),
      ),
    );
    await api.deps.redis.rpush(api.deps.keys.outcomeQueue(await api.gameOwner(gameId)), ...items);
  }
});
