import { players, spins } from "@outcomes/db";
import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import { addBlock, createGame, queueItems, queueLength, spin } from "@outcomes/testkit/spin-path";
import { eventually } from "@outcomes/testkit/workers";
import { eq } from "drizzle-orm";
import { afterAll, describe, expect, it } from "vitest";

const opened: TestApi[] = [];
afterAll(async () => {
  await Promise.all(opened.map((api) => api.close()));
});

async function apiWith(env: Record<string, string>) {
  const api = await startTestApi(env);
  opened.push(api);
  const { partnerId, apiKey } = await api.createPartner();
  const game = await createGame(api, partnerId, { maxWagerUsd: 1000 });
  return { api, apiKey, gameId: game.gameId };
}

/**
 * While a commit is held, batches go only when full: three spins each (a second's wait at most).
 * Its game has ten outcomes.
 */
async function batchesOfThree() {
  const setup = await apiWith({ SPIN_BATCH_MAX_SIZE: "3", SPIN_BATCH_MAX_WAIT_MS: "1000" });
  await addBlock(
    setup.api,
    setup.gameId,
    Array.from({ length: 10 }, () => ["T1", 2] as [string, number]),
  );
  return setup;
}

const settledWithin = (promise: Promise<unknown>, ms: number) =>
  Promise.race([promise.then(() => true), new Promise((resolve) => setTimeout(() => resolve(false), ms))]);

type Api = Awaited<ReturnType<typeof apiWith>>;
/** The held spin's wager: only its row waits at COMMIT. */
const HELD_WAGER_USD = 7;

/**
 * Starts a spin whose commit waits (a deferred trigger on its row takes a lock this test holds) and
 * resolves once it is waiting: until `release`, the API has a batch committing, so new spins gather.
 * Once per test (the trigger is created here).
 * An ordinary spin goes first: a block's first spin locks the block's row, which would hold up
 * every other spin of the block.
 */
async function holdACommit({ api, apiKey, gameId }: Api, idempotencyKey?: string) {
  const opener = await spin(api, apiKey, { gameId, playerId: "opener", wagerUsd: 1 });
  expect(opener.status).toBe(200);
  const { sql } = api.database;
  await sql.unsafe(`
    create function hold_commit() returns trigger language plpgsql as $$ begin
      if new.wager_micros = ${HELD_WAGER_USD}000000 then perform pg_advisory_xact_lock_shared(4243); end if;
      return null; end $$;
    create constraint trigger hold_commit after insert on spins deferrable initially deferred
      for each row execute function hold_commit();`);
  const gate = await sql.reserve();
  await gate`select pg_advisory_lock(4243)`;
  const held = spin(api, apiKey, { gameId, playerId: "held", wagerUsd: HELD_WAGER_USD }, idempotencyKey);
  await eventually(
    async () =>
      (
        await sql`select 1 from pg_locks where locktype = 'advisory' and objid = 4243 and not granted
          and database = (select oid from pg_database where datname = current_database())`
      ).length === 1,
  );
  const release = async () => {
    await gate`select pg_advisory_unlock(4243)`;
    gate.release();
    const answer = await held;
    // The trigger stays (each test's API has a database of its own): dropping it would take its
    // locks on the partitions in another order than a batch still inserting, a deadlock.
    return answer;
  };
  return { release, openerSpinId: opener.body.spinId as string };
}

describe("group commit", () => {
  it("answers only after the batch committed", async () => {
    const { api, apiKey, gameId } = await apiWith({ SPIN_BATCH_MAX_WAIT_MS: "5" });
    await addBlock(api, gameId, [
      ["T1", 2],
      ["T1", 2],
      ["T1", 2],
    ]);
    const { sql } = api.database;
    // A deferred constraint trigger runs at COMMIT: it makes the batch's commit wait for a lock
    // this test holds, after every row of the batch was written.
    await sql.unsafe(`
      create function wait_for_gate() returns trigger language plpgsql as
        $$ begin perform pg_advisory_xact_lock_shared(4242); return null; end $$;
      create constraint trigger wait_for_gate after insert on spins deferrable initially deferred
        for each row execute function wait_for_gate();`);
    const gate = await sql.reserve();
    try {
      await gate`select pg_advisory_lock(4242)`;
      const answers = Promise.all(
        ["gated-1", "gated-2"].map((playerId) => spin(api, apiKey, { gameId, playerId, wagerUsd: 1 })),
      );
      expect(await settledWithin(answers, 500)).toBe(false);
      expect(await api.database.db.select().from(spins).where(eq(spins.gameId, gameId))).toEqual([]);

      await gate`select pg_advisory_unlock(4242)`;
      const [first, second] = await answers;
      expect([first?.status, second?.status]).toEqual([200, 200]);
      const rows = await api.database.db.select().from(spins).where(eq(spins.gameId, gameId));
      expect(rows.map((row) => row.id).sort()).toEqual([first?.body.spinId, second?.body.spinId].sort());
    } finally {
      gate.release();
      await sql.unsafe("drop trigger wait_for_gate on spins; drop function wait_for_gate();");
    }
  });

  it("answers a key whose first request committed while its batch waited from the record, and writes the batch's others", async () => {
    const setup = await batchesOfThree();
    const { api, apiKey, gameId } = setup;
    // The first request's commit is held, its key locked; its duplicate and two others make one full batch.
    const { release, openerSpinId } = await holdACommit(setup, "first-key");
    const before = await queueLength(api, gameId);
    const answers = Promise.all([
      spin(api, apiKey, { gameId, playerId: "held", wagerUsd: HELD_WAGER_USD }, "first-key"),
      spin(api, apiKey, { gameId, playerId: "other-1", wagerUsd: 1 }),
      spin(api, apiKey, { gameId, playerId: "other-2", wagerUsd: 1 }, "other-key"),
    ]);
    const { sql } = api.database;
    // The batch waits for the key's lock (the held commit waits for the test's).
    await eventually(
      async () =>
        (
          await sql`select 1 from pg_locks where locktype = 'advisory' and not granted
            and database = (select oid from pg_database where datname = current_database())`
        ).length === 2,
    );
    const first = await release();
    const [duplicate, other1, other2] = await answers;
    expect([first.status, duplicate?.status, other1?.status, other2?.status]).toEqual([200, 200, 200, 200]);
    expect(duplicate?.body.spinId).toBe(first.body.spinId);
    expect(duplicate?.headers.get("idempotent-replayed")).toBe("true");
    const rows = await api.database.db.select().from(spins).where(eq(spins.gameId, gameId));
    const written = [openerSpinId, first.body.spinId, other1?.body.spinId, other2?.body.spinId];
    expect(rows.map((row) => row.id).sort()).toEqual(written.sort());
    // The duplicate's outcome went back; the others used one each.
    expect(await queueLength(api, gameId)).toBe(before - 2);
    const replay = await spin(api, apiKey, { gameId, playerId: "other-2", wagerUsd: 1 }, "other-key");
    expect(replay.body.spinId).toBe(other2?.body.spinId);
  });

  it("fails only the spin that cannot be written (KS-5003, its outcome back in front); its batch's others commit", async () => {
    // Six parallel spins are two batches of three.
    const setup = await batchesOfThree();
    const { api, apiKey, gameId } = setup;
    const { sql } = api.database;
    await sql.unsafe(`
      create function fail_poison() returns trigger language plpgsql as
        $$ begin if new.wager_micros = 13000000 then raise exception 'poisoned spin'; end if; return new; end $$;
      create trigger fail_poison before insert on spins for each row execute function fail_poison();`);
    const { release, openerSpinId } = await holdACommit(setup);
    const before = await queueItems(api, gameId);
    try {
      const requests = Array.from({ length: 6 }, (_, i) => ({
        gameId,
        playerId: `batch-${i}`,
        wagerUsd: i === 0 ? 13 : 1,
      }));
      const answers = await Promise.all(requests.map((body) => spin(api, apiKey, body)));
      // CONTRACT §9: the poisoned spin's batch is split until it is alone; the others commit.
      expect(answers.map((answer) => answer.status)).toEqual([500, 200, 200, 200, 200, 200]);
      expect(answers[0]?.body.errorCode).toBe("KS-5003");

      const committed = answers.filter((answer) => answer.status === 200);
      // The held spin has not committed; the opener's is the one before the batches.
      const rows = (await api.database.db.select().from(spins).where(eq(spins.gameId, gameId))).filter(
        (row) => row.id !== openerSpinId,
      );
      expect(rows.map((row) => row.id).sort()).toEqual(committed.map((answer) => answer.body.spinId).sort());
      const playerRows = await api.database.db.select().from(players).where(eq(players.partnerId, rows[0]!.partnerId));
      expect(
        playerRows
          .map((row) => row.externalId)
          .filter((id) => id !== "opener")
          .sort(),
      ).toEqual(committed.map((answer) => answer.body.playerId).sort());
      // The failed spin's outcome is back, in front: the queue lost exactly the committed ones.
      const after = await queueItems(api, gameId);
      expect(after).toHaveLength(before.length - 5);
      expect(after.slice(1)).toEqual(before.slice(6));
      expect(new Set([after[0], ...rows.map((row) => `${row.blockId}:${row.outcomeIndex}`)]).size).toBe(6);
    } finally {
      // The held commit first: dropping a trigger waits for every transaction on spins.
      expect((await release()).status).toBe(200);
      await sql.unsafe("drop trigger fail_poison on spins; drop function fail_poison();");
    }
    const retried = await spin(api, apiKey, { gameId, playerId: "batch-0", wagerUsd: 13 });
    expect([retried.status, retried.body.balance.balanceUsd]).toEqual([200, 13]);
    expect(await queueLength(api, gameId)).toBe(before.length - 6);
  });

  it("chains one player's spins of one batch in arrival order, and lists them in that order", async () => {
    const setup = await apiWith({ SPIN_BATCH_MAX_SIZE: "30", SPIN_BATCH_MAX_WAIT_MS: "1000" });
    const { api, apiKey, gameId } = setup;
    await addBlock(
      api,
      gameId,
      Array.from({ length: 32 }, (_, i) => (i % 3 === 0 ? ["T0", 0] : ["T2", "1.5"]) as [string, number | string]),
    );
    // The 30 gather behind a held commit and go as one batch when it is full.
    const { release } = await holdACommit(setup);
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) => spin(api, apiKey, { gameId, playerId: "solo", wagerUsd: 1 + (i % 4) })),
    );
    expect((await release()).status).toBe(200);
    expect(answers.every((answer) => answer.status === 200)).toBe(true);
    const listed = await api.request("/api/partner/v1/players/solo/spins?limit=100", { apiKey });
    const oldestFirst = [...listed.body.spins].reverse();
    let balance = 0;
    for (const item of oldestFirst) {
      balance = Math.round((balance + item.outcome.payoutUsd - item.wagerUsd) * 1e6) / 1e6;
      expect(item.balance.balanceUsd).toBe(balance);
    }
    const player = await api.request("/api/partner/v1/players/solo", { apiKey });
    expect([player.body.totalSpins, player.body.balanceUsd]).toEqual([30, balance]);
    const batches = await api.database.sql`select count(distinct xmin::text)::int as n from spins
      where player_id = (select id from players where external_id = 'solo')`;
    expect(batches[0]?.n).toBe(1);
  });

  it("sends a spin at once when nothing is committing, and a gathered batch as soon as the commit before it ends", async () => {
    const setup = await apiWith({ SPIN_BATCH_MAX_WAIT_MS: "1000" });
    const { api, apiKey, gameId } = setup;
    await addBlock(
      api,
      gameId,
      Array.from({ length: 5 }, () => ["T1", 2] as [string, number]),
    );
    // Alone, a spin is not held for SPIN_BATCH_MAX_WAIT_MS.
    let started = Date.now();
    expect((await spin(api, apiKey, { gameId, playerId: "alone", wagerUsd: 1 })).status).toBe(200);
    expect(Date.now() - started).toBeLessThan(800);

    // Behind a held commit two spins gather (no answer while it is held); once it ends they go at
    // once (a wait for the 1 s would end ~700 ms after the release), in one batch.
    const { release } = await holdACommit(setup);
    const answers = Promise.all(
      ["behind-1", "behind-2"].map((playerId) => spin(api, apiKey, { gameId, playerId, wagerUsd: 1 })),
    );
    expect(await settledWithin(answers, 300)).toBe(false);
    started = Date.now();
    expect((await release()).status).toBe(200);
    expect((await answers).map((answer) => answer.status)).toEqual([200, 200]);
    expect(Date.now() - started).toBeLessThan(500);
    const batches = await api.database.sql`select count(distinct xmin::text)::int as n from spins
      where game_id = ${gameId} and player_id in (select id from players where external_id like 'behind-%')`;
    expect(batches[0]?.n).toBe(1);
  });
});
