import { sql } from "drizzle-orm";
import type { Database, Executor } from "../client.js";
import type { TimeRange } from "./settlement-figures.js";
import { sqlClientOf } from "./sql-client.js";

/**
 * The time-partitioned tables (migration 0011, docs/partitioning.md), each range-partitioned by
 * `created_at` in UTC days or months. Partitions are made by the SQL function
 * `ensure_time_partitions`, which the migration defined and used; there is no DEFAULT partition, so
 * a row dated where no partition exists fails its insert rather than landing where nothing prunes
 * or drops it. The `partitions.maintain` job keeps every table `PARTITIONS_AHEAD_DAYS` ahead.
 */
export const TIME_PARTITIONED_TABLES = {
  spins: "day",
  events: "month",
  idempotency_keys: "day",
} as const;
export type TimePartitionedTable = keyof typeof TIME_PARTITIONED_TABLES;

export const PARTITIONS_AHEAD_DAYS = 7;
/**
 * An idempotency partition goes once its whole range is older than the records' 24 h plus this
 * margin: a day's partition is dropped at 01:00 UTC two days later, so about two days are kept.
 */
export const IDEMPOTENCY_DROP_MARGIN_HOURS = 1;
const DROP_LOCK = 7_283_544;

/** Makes the partitions of `table` covering [from, to) that do not exist yet; returns their names. */
export async function ensurePartitions(db: Executor, table: TimePartitionedTable, range: TimeRange): Promise<string[]> {
  const rows = await db.execute<{ name: string }>(sql`
    select ensure_time_partitions(${table}::regclass, ${TIME_PARTITIONED_TABLES[table]},
      ${range.from.toISOString()}::timestamptz, ${range.to.toISOString()}::timestamptz) as name`);
  return rows.map((row) => row.name);
}

/**
 * Every table's partitions from 25 h before `now` (the database clock; the oldest live idempotency
 * record's time, with a margin) to `PARTITIONS_AHEAD_DAYS` ahead.
 */
export async function createPartitionsAhead(db: Executor): Promise<string[]> {
  const created: string[] = [];
  for (const [table, unit] of Object.entries(TIME_PARTITIONED_TABLES)) {
    const rows = await db.execute<{ name: string }>(sql`
      select ensure_time_partitions(${table}::regclass, ${unit}, now() - interval '25 hours',
        now() + make_interval(days => ${PARTITIONS_AHEAD_DAYS})) as name`);
    created.push(...rows.map((row) => row.name));
  }
  return created;
}

export interface Partition {
  name: string;
  from: Date;
  to: Date;
}

/** The partitions attached to `table`, oldest first. */
export async function listPartitions(db: Executor, table: TimePartitionedTable): Promise<Partition[]> {
  const rows = await db.execute<{ name: string; from: string; to: string }>(sql`
    select c.relname as name, b.bounds[1] as from, b.bounds[2] as to
    from pg_inherits i join pg_class c on c.oid = i.inhrelid,
      lateral (select regexp_match(pg_get_expr(c.relpartbound, c.oid), 'FROM \\(''([^'']+)''\\) TO \\(''([^'']+)''\\)')
        as bounds) b
    where i.inhparent = ${table}::regclass and not i.inhdetachpending
    order by b.bounds[1]::timestamptz`);
  return rows.map((row) => ({ name: row.name, from: new Date(row.from), to: new Date(row.to) }));
}

/**
 * How far ahead of the database clock each table's partitions reach without a gap, in seconds (0
 * when no partition holds now): what the partitions job keeps at 7 days, for alerting.
 */
export async function partitionHorizons(
  db: Executor,
): Promise<Array<{ table: TimePartitionedTable; aheadSeconds: number }>> {
  const [clock] = await db.execute<{ now: number }>(sql`select extract(epoch from now())::float8 * 1000 as now`);
  const now = Number(clock!.now);
  const horizons = [];
  for (const table of Object.keys(TIME_PARTITIONED_TABLES) as TimePartitionedTable[]) {
    let reach = now;
    for (const partition of await listPartitions(db, table)) {
      if (partition.from.getTime() <= reach && reach < partition.to.getTime()) reach = partition.to.getTime();
    }
    horizons.push({ table, aheadSeconds: Math.round((reach - now) / 1000) });
  }
  return horizons;
}

/**
 * Drops each idempotency partition whose whole range has expired: one `DETACH PARTITION …
 * CONCURRENTLY` (which waits for the transactions using it but blocks no insert or read of the
 * table) and one `DROP TABLE`, however many records it held. Runs take turns on an advisory lock,
 * and each first finishes what an interrupted run left: a detach still pending, a detached table
 * not yet dropped. Returns the dropped partitions' names.
 */
export async function dropExpiredIdempotencyPartitions(db: Database): Promise<string[]> {
  const connection = await sqlClientOf(db).reserve();
  try {
    await connection`select pg_advisory_lock(${DROP_LOCK})`;
    try {
      const dropped: string[] = [];
      const pending = await connection<{ name: string }[]>`
        select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
        where i.inhparent = 'idempotency_keys'::regclass and i.inhdetachpending`;
      for (const { name } of pending) {
        await connection`alter table idempotency_keys detach partition ${connection(name)} finalize`;
      }
      const expired = await connection<{ name: string }[]>`
        select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
        where i.inhparent = 'idempotency_keys'::regclass
          and (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'TO \\(''([^'']+)''\\)'))[1]::timestamptz
            <= now() - interval '24 hours' - make_interval(hours => ${IDEMPOTENCY_DROP_MARGIN_HOURS})
        order by 1`;
      for (const { name } of expired) {
        await connection`alter table idempotency_keys detach partition ${connection(name)} concurrently`;
      }
      // Detached here or by an interrupted run: plain tables of the partitions' names.
      const detached = await connection<{ name: string }[]>`
        select relname as name from pg_class
        where relname ~ '^idempotency_keys_p[0-9]{8}$' and relkind = 'r' and not relispartition
          and relnamespace = (select relnamespace from pg_class where oid = 'idempotency_keys'::regclass)
        order by 1`;
      for (const { name } of detached) {
        await connection`drop table ${connection(name)}`;
        dropped.push(name);
      }
      return dropped;
    } finally {
      await connection`select pg_advisory_unlock(${DROP_LOCK})`;
    }
  } finally {
    connection.release();
  }
}
