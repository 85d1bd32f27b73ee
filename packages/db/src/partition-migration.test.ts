import { databaseBeforeMigration } from "@outcomes/testkit/migrations";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDatabase } from "./client.js";
import { migrateDatabase } from "./migrate.js";
import { listPartitions } from "./repositories/partitions.js";

const PARTITION_MIGRATION = "0011_time_partitions";
const DAY_MS = 24 * 3600_000;

let scratch: Awaited<ReturnType<typeof databaseBeforeMigration>>;
beforeAll(async () => {
  scratch = await databaseBeforeMigration(PARTITION_MIGRATION);
});
afterAll(async () => {
  await scratch?.drop();
});

const SPIN_TIMES = ["2025-12-31T23:59:59.999Z", "2026-01-01T00:00:00.000Z", "2026-03-10T08:00:00.000Z"];
const EVENT_TIMES = ["2025-11-30T23:00:00.000Z", "2026-02-14T00:00:00.000Z"];
const KEY_TIMES = ["2026-03-09T10:00:00.000Z"];

/** Rows of every kind the migration moves, written on the schema before it. */
async function seedBefore(sql: postgres.Sql) {
  await sql`insert into partners (id, slug, name) values ('ptr_m', 'm', 'M')`;
  await sql`insert into par_sheets (id, partner_id, environment, name, version, status, draw_mode, document,
      rtp, certified_rtp, hit_frequency, volatility)
    values ('par_m', 'ptr_m', 'sandbox', 'Sheet', '1', 'ACTIVE', 'independent', '{}', '0.95', '0.95', 0.3, 2.1)`;
  const [game] = await sql`insert into games (partner_id, environment, par_sheet_id, name, max_wager_micros)
    values ('ptr_m', 'sandbox', 'par_m', 'Game', 100000000) returning id`;
  const [player] = await sql`insert into players (partner_id, environment, external_id)
    values ('ptr_m', 'sandbox', 'p1') returning id`;
  const [block] = await sql`insert into blocks (game_id, sequence, size, entries, commitment, status)
    values (${game!.id}, 1, 10, '\\x', 'c', 'serving') returning id`;
  for (const [i, at] of [...SPIN_TIMES, new Date().toISOString()].entries()) {
    await sql`insert into spins (id, partner_id, environment, game_id, player_id, block_id, outcome_index, prize_tier,
        multiplier_millionths, wager_micros, payout_micros, balance_after_micros, presentation, created_at)
      values (${`spn_m${i}`}, 'ptr_m', 'sandbox', ${game!.id}, ${player!.id}, ${block!.id}, ${i}, 'T0', 0, ${1000 + i},
        0, ${-1000 - i}, '{"n":1}', ${at})`;
  }
  await sql`insert into spins (id, partner_id, environment, game_id, player_id, forced, prize_tier,
      multiplier_millionths, wager_micros, payout_micros, balance_after_micros, presentation, created_at)
    values ('spn_forced', 'ptr_m', 'sandbox', ${game!.id}, ${player!.id}, true, 'T1', 2000000, 1, 2, 1, '{}', now())`;
  await sql`insert into webhooks (id, partner_id, environment, url, events, secret)
    values ('whk_m', 'ptr_m', 'sandbox', 'https://example.com', '{block.low_reserve}', 'whsec_x')`;
  for (const [i, at] of EVENT_TIMES.entries()) {
    await sql`insert into events (id, partner_id, environment, type, sequence, payload, created_at)
      values (${`evt_m${i}`}, 'ptr_m', 'sandbox', 'block.low_reserve', ${i + 1}, '{}', ${at})`;
    await sql`insert into webhook_deliveries (id, webhook_id, event_id, event_type, body)
      values (${`dlv_m${i}`}, 'whk_m', ${`evt_m${i}`}, 'block.low_reserve', '{}')`;
  }
  for (const [i, at] of [...KEY_TIMES, new Date().toISOString()].entries()) {
    await sql`insert into idempotency_keys (partner_id, environment, key, request_hash, response_status, response_body,
        created_at) values ('ptr_m', 'sandbox', ${`key-${i}`}, 'h', 200, '{"spinId":"x"}', ${at})`;
  }
}

const snapshot = (sql: postgres.Sql) =>
  Promise.all([
    sql`select * from spins order by id`,
    sql`select * from events order by id`,
    sql`select * from idempotency_keys order by key`,
  ]);

describe(`migration ${PARTITION_MIGRATION}`, () => {
  it("moves every spin, event and idempotency record into day (month) partitions, keys and references intact", async () => {
    await scratch.migrateBefore();
    const before = postgres(scratch.url, { max: 1, onnotice: () => {} });
    let rowsBefore: Awaited<ReturnType<typeof snapshot>>;
    try {
      await seedBefore(before);
      rowsBefore = await snapshot(before);
    } finally {
      await before.end();
    }

    await migrateDatabase(scratch.url);

    const client = createDatabase(scratch.url, { max: 1 });
    const { sql } = client;
    try {
      const partitioned = await sql`
        select c.relname, pg_get_partkeydef(c.oid) as key from pg_partitioned_table p join pg_class c on c.oid = p.partrelid
        order by 1`;
      expect(partitioned.map((row) => [row.relname, row.key])).toEqual([
        ["events", "RANGE (created_at)"],
        ["idempotency_keys", "RANGE (created_at)"],
        ["spins", "RANGE (created_at)"],
      ]);
      const after = postgres(scratch.url, { max: 1, onnotice: () => {} });
      expect(await snapshot(after).finally(() => after.end())).toEqual(rowsBefore);

      // Each row sits in the partition of its day (month for events), and the partitions reach a week ahead.
      const placed = await sql`select tableoid::regclass::text as part from spins where id like 'spn_m%' order by id`;
      expect(placed.slice(0, 3).map((row) => row.part)).toEqual([
        "spins_p20251231",
        "spins_p20260101",
        "spins_p20260310",
      ]);
      const eventParts = await sql`select tableoid::regclass::text as part from events order by id`;
      expect(eventParts.map((row) => row.part)).toEqual(["events_p202511", "events_p202602"]);
      for (const table of ["spins", "events", "idempotency_keys"] as const) {
        const partitions = await listPartitions(client.db, table);
        expect(partitions.at(-1)!.to.getTime()).toBeGreaterThan(Date.now() + 7 * DAY_MS);
      }

      // Deliveries now reference (event id, created_at), filled from their events.
      const deliveries = await sql`select id, event_created_at from webhook_deliveries order by id`;
      expect(deliveries.map((row) => new Date(row.event_created_at).toISOString())).toEqual(EVENT_TIMES);
      await expect(
        sql`insert into webhook_deliveries (id, webhook_id, event_id, event_created_at, event_type, body, redelivery_of)
          values ('dlv_bad', 'whk_m', 'evt_m0', now(), 'block.low_reserve', '{}', 'dlv_m0')`,
      ).rejects.toMatchObject({ code: "23503" });

      // The outcomes used so far, across every day, are still used once: a second use fails.
      const used = await sql`select block_id, outcome_index, spin_id from spin_outcomes order by outcome_index`;
      expect(used.map((row) => [row.outcome_index, row.spin_id])).toEqual([
        [0, "spn_m0"],
        [1, "spn_m1"],
        [2, "spn_m2"],
        [3, "spn_m3"],
      ]);
      await expect(
        sql`insert into spin_outcomes (block_id, outcome_index, spin_id) values (${used[0]!.block_id}, 0, 'spn_again')`,
      ).rejects.toMatchObject({ code: "23505", constraint_name: "spin_outcomes_pkey" });
    } finally {
      await client.close();
    }
  });
});
