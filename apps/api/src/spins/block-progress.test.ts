import { blocks, events, games } from "@outcomes/db";
import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import { addBlock, createGame, spin } from "@outcomes/testkit/spin-path";
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
      await vi.waitFor(
        async () => {
          const [row] = await tx`
            select count(*)::int as n from pg_stat_activity
            where datname = current_database() and wait_event_type = 'Lock' and pid <> pg_backend_pid()`;
          expect(row?.n).toBe(1);
        },
        { timeout: 5_000, interval: 20 },
      );
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
