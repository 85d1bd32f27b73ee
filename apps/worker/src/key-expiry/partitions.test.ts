import {
  ensurePartitions,
  listPartitions,
  PARTITIONS_AHEAD_DAYS,
  partitionHorizons,
  TIME_PARTITIONED_TABLES,
  type TimePartitionedTable,
} from "@outcomes/db";
import { runPartitionMaintenanceNow } from "@outcomes/queue";
import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import { addBlock, createGame, spin } from "@outcomes/testkit/spin-path";
import { eventually, startRole } from "@outcomes/testkit/workers";
import type { Job } from "bullmq";
import { sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PARTITIONS_EVERY_MS, PARTITIONS_SCHEDULER_ID, startKeyExpiryRole } from "./index.js";

const HOUR_MS = 3600_000;
const DAY_MS = 24 * HOUR_MS;

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api?.close();
});

const queue = () => api.deps.producers.queues["key-expiry"];

async function finished(jobId: string): Promise<Job> {
  return eventually(
    async () => {
      const job = await queue().getJob(jobId);
      return job?.finishedOn ? job : null;
    },
    60_000,
    50,
  );
}

/** `count` idempotency records spread over the UTC day `daysAgo` days back, in one statement. */
async function insertRecordsOn(daysAgo: number, count: number): Promise<string> {
  const dayStart = new Date(Math.floor((Date.now() - daysAgo * DAY_MS) / DAY_MS) * DAY_MS);
  await ensurePartitions(api.database.db, "idempotency_keys", { from: dayStart, to: new Date(dayStart.getTime() + 1) });
  await api.database.db.execute(sql`
    insert into idempotency_keys (partner_id, environment, key, request_hash, response_status, response_body, created_at)
    select 'ptr_expired', 'sandbox', 'expired-' || i, repeat('a', 64), 200, '{"spinId":"spn_0123456789abcdef"}'::jsonb,
      ${dayStart.toISOString()}::timestamptz + i * ${DAY_MS / count} * interval '1 millisecond'
    from generate_series(0, ${count - 1}) i`);
  return `idempotency_keys_p${dayStart.toISOString().slice(0, 10).replaceAll("-", "")}`;
}

async function tableExists(name: string): Promise<boolean> {
  const [row] = await api.database.db.execute<{ found: boolean }>(
    sql`select to_regclass(${name}) is not null as found`,
  );
  return row!.found;
}

async function recordCount(): Promise<number> {
  const [row] = await api.database.db.execute<{ n: number }>(sql`select count(*)::int as n from idempotency_keys`);
  return row!.n;
}

describe("partitions.maintain (key-expiry role)", () => {
  it("drops an expired day of idempotency records (150,000) in one step; live keys still replay", async () => {
    const { partnerId, apiKey } = await api.createPartner();
    const game = await createGame(api, partnerId, { maxWagerUsd: 100 });
    await addBlock(api, game.gameId, [
      ["T1", 2],
      ["T0", 0],
    ]);
    const body = { gameId: game.gameId, playerId: "partitions-1", wagerUsd: 1 };
    const first = await spin(api, apiKey, body, "live-key");
    expect(first.status).toBe(200);

    const expiredDay = await insertRecordsOn(3, 150_000);
    // Yesterday's records are still live for part of today: their day must stay.
    const yesterday = await insertRecordsOn(1, 10);
    expect(await recordCount()).toBe(150_011);

    // Two worker copies, two runs at once: the day goes once, neither run fails.
    const roles = [await startRole(api, startKeyExpiryRole), await startRole(api, startKeyExpiryRole)];
    try {
      const schedulers = await queue().getJobSchedulers();
      expect(schedulers.find((s) => s.key === PARTITIONS_SCHEDULER_ID)).toMatchObject({ every: PARTITIONS_EVERY_MS });
      const jobs = await Promise.all([1, 2].map(() => runPartitionMaintenanceNow(api.deps.producers)));
      const runs = await Promise.all(jobs.map(finished));
      expect(runs.map((run) => run.failedReason)).toEqual([undefined, undefined]);
      // The runs the schedulers queued at start may have taken it first.
      await eventually(async () => !(await tableExists(expiredDay)));
      const dropped = runs.flatMap((run) => run.returnvalue.dropped as string[]);
      expect(dropped.filter((name) => name !== expiredDay)).toEqual([]);
    } finally {
      await Promise.all(roles.map((role) => role.close()));
    }

    expect(await tableExists(expiredDay)).toBe(false);
    expect(await tableExists(yesterday)).toBe(true);
    expect(await recordCount()).toBe(11);
    const replay = await spin(api, apiKey, body, "live-key");
    expect([replay.status, replay.body.spinId, replay.headers.get("idempotent-replayed")]).toEqual([
      200,
      first.body.spinId,
      "true",
    ]);
  });

  it(`keeps every table's partitions ${PARTITIONS_AHEAD_DAYS} days ahead, so no insert of now finds none`, async () => {
    // A partition the job should have made: gone (as if the role had been stopped).
    const future = new Date(Date.now() + 3 * DAY_MS);
    const missing = (await listPartitions(api.database.db, "spins")).find(
      (partition) => partition.from <= future && future < partition.to,
    );
    await api.database.sql.unsafe(`drop table ${missing!.name}`);
    const reach = async () =>
      (await partitionHorizons(api.database.db)).find((horizon) => horizon.table === "spins")!.aheadSeconds;
    // What /metrics shows (outcomes_partitions_ahead_seconds): the gap cuts the reach to under 3 days.
    expect(await reach()).toBeLessThanOrEqual(3 * 86_400);

    const role = await startRole(api, startKeyExpiryRole);
    try {
      const run = await finished(await runPartitionMaintenanceNow(api.deps.producers));
      expect(run.failedReason).toBeUndefined();
    } finally {
      await role.close();
    }
    expect(await tableExists(missing!.name)).toBe(true);
    expect(await reach()).toBeGreaterThan(PARTITIONS_AHEAD_DAYS * 86_400);

    const now = Date.now();
    for (const table of Object.keys(TIME_PARTITIONED_TABLES) as TimePartitionedTable[]) {
      const partitions = await listPartitions(api.database.db, table);
      // Contiguous, from before the oldest live idempotency record to a week ahead.
      for (const [i, partition] of partitions.entries()) {
        if (i > 0) expect(partition.from).toEqual(partitions[i - 1]!.to);
      }
      expect(partitions[0]!.from.getTime()).toBeLessThanOrEqual(now - 25 * HOUR_MS);
      expect(partitions.at(-1)!.to.getTime()).toBeGreaterThan(now + PARTITIONS_AHEAD_DAYS * DAY_MS);
    }

    // A row of 6 days 23 hours ahead goes in; far beyond the partitions it is refused (there is no
    // DEFAULT partition to hide it in). Each in a transaction rolled back.
    const insertAt = async (table: TimePartitionedTable, at: Date) =>
      api.database.sql
        .begin(async (tx) => {
          const iso = at.toISOString();
          if (table === "idempotency_keys") {
            await tx`insert into idempotency_keys (partner_id, environment, key, request_hash, response_status,
              response_body, created_at) values ('ptr_x', 'sandbox', 'k', 'h', 200, '{}', ${iso})`;
          } else if (table === "events") {
            await tx`insert into events (id, partner_id, environment, type, sequence, payload, created_at)
              values ('evt_x', 'ptr_x', 'sandbox', 'block.low_reserve', 1, '{}', ${iso})`;
          } else {
            await tx`set local session_replication_role = replica`; // no foreign keys for this probe
            await tx`insert into spins (id, partner_id, environment, game_id, player_id, block_id, outcome_index,
              prize_tier, multiplier_millionths, wager_micros, payout_micros, balance_after_micros, presentation,
              created_at) values ('spn_x', 'ptr_x', 'sandbox', 1, 1, 1, 0, 'T0', 0, 1, 0, 0, '{}', ${iso})`;
          }
          throw new Error("rolled back");
        })
        .catch((error: Error & { code?: string }) => error.code ?? error.message);
    const weekAhead = new Date(now + PARTITIONS_AHEAD_DAYS * DAY_MS - HOUR_MS);
    const farAhead = new Date(now + 400 * DAY_MS);
    for (const table of Object.keys(TIME_PARTITIONED_TABLES) as TimePartitionedTable[]) {
      expect([table, await insertAt(table, weekAhead)]).toEqual([table, "rolled back"]);
      // 23514: no partition of relation found for row.
      expect([table, await insertAt(table, farAhead)]).toEqual([table, "23514"]);
    }
  });
});
