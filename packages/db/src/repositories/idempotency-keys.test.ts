import { testDatabaseForFile } from "@outcomes/testkit/file-fixture";
import type postgres from "postgres";
import { describe, expect, it } from "vitest";
import { createDatabase } from "../client.js";
import { lockAndFindIdempotencyRecords, saveIdempotencyRecords } from "./idempotency-keys.js";

const database = testDatabaseForFile();

describe("the keyed batch's record statements", () => {
  it("probe the index for each key, also once a day's partition planned empty has filled, before any analyze", async () => {
    // One connection, as an API process's: its prepared statements are planned while today's partition is empty.
    const { sql, close } = createDatabase(database.url, { max: 1 });
    try {
      const scope = (key: string) => ({ partnerId: "ptr_probe", environment: "sandbox" as const, key });
      const batch = (keys: string[]) =>
        sql.begin(async (tx) => {
          const found = await lockAndFindIdempotencyRecords(tx, keys.map(scope));
          const fresh = keys.filter((_, i) => found[i] === null);
          await saveIdempotencyRecords(
            tx,
            fresh.map((key) => ({
              scope: scope(key),
              requestHash: `h-${key}`,
              responseStatus: 200,
              responseBody: { key },
            })),
          );
          return found;
        });
      // Enough batches of 20 keys for Postgres to settle on a generic plan, made while the partition
      // is empty (with the hash join that plan chose, the check below read 203,120 rows).
      const keys = (prefix: string) => Array.from({ length: 20 }, (_, j) => `${prefix}-${j}`);
      for (let i = 0; i < 8; i++) await batch(keys(`warm-${i}`));
      // The day fills up, and nobody analyzed it yet (autoanalyze comes within a minute or so).
      await sql.unsafe(`
        insert into idempotency_keys (partner_id, environment, key, request_hash, response_status, response_body)
        select 'ptr_bulk', 'sandbox', 'k' || g, 'h', 200, '{}' from generate_series(1, 20000) g`);
      const before = await sequentialReads(sql);
      for (let i = 0; i < 5; i++) await batch([...keys(`after-${i}`), `warm-${i}-0`]);
      expect(await sequentialReads(sql)).toBe(before);
      // And they still answer: a key seen before is found, a new one saved.
      const found = await batch(["warm-1-0", "after-0-0", "never-seen"]);
      expect(found.map((record) => record?.requestHash ?? null)).toEqual(["h-warm-1-0", "h-after-0-0", null]);
    } finally {
      await close();
    }
  });

  it("refuse to store a second live record of a key, failing the statement and its transaction", async () => {
    const { sql, close } = createDatabase(database.url, { max: 1 });
    try {
      const scope = { partnerId: "ptr_twice", environment: "sandbox" as const, key: "k-1" };
      const save = (hash: string, also: string) =>
        sql.begin(async (tx) => {
          await tx`insert into event_sequences (partner_id, environment, last_sequence) values (${also}, 'sandbox', 1)`;
          await saveIdempotencyRecords(tx, [{ scope, requestHash: hash, responseStatus: 200, responseBody: {} }]);
        });
      await save("first", "ptr_first");
      await expect(save("second", "ptr_second")).rejects.toMatchObject({ code: "23502" });
      const [stored] = await lockAndFindIdempotencyRecords(sql, [scope]);
      expect(stored?.requestHash).toBe("first");
      // The transaction went with it: its other write is not there.
      expect(await sql`select partner_id from event_sequences where partner_id like 'ptr_%' order by 1`).toEqual([
        { partner_id: "ptr_first" },
      ]);
    } finally {
      await close();
    }
  });
});

/** Rows read by sequential scans of the key partitions so far, this connection's counts included. */
async function sequentialReads(sql: postgres.Sql): Promise<number> {
  await sql`select pg_stat_force_next_flush()`;
  const [row] = await sql<{ read: number }[]>`
    select coalesce(sum(seq_tup_read), 0)::int as read from pg_stat_user_tables where relname like 'idempotency_keys_p%'`;
  return row!.read;
}
