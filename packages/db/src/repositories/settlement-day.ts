import { utcDayBounds } from "@outcomes/core";
import { sql } from "drizzle-orm";
import type { Executor } from "../client.js";

/** Where a report's day stands at the moment its figures are taken. */
export interface SettlementDayState {
  /** The database's clock (a test's, when it sets one): the report's `generatedAt`. */
  now: Date;
  /** The UTC day has ended. */
  ended: boolean;
  /** Figures summed after this can miss no spin, void or free-round spin of the day: the report is final. */
  complete: boolean;
}

/**
 * Whether a report whose figures are summed now is final (CONTRACT §8: no spin is ever left out of
 * its day's final report). A spin's `created_at` is `clock_timestamp()` in its insert, after its
 * transaction got its id (as a void's `voided_at` and a free-round spin's `created_at` are), so a
 * row dated before the day's end belongs to a transaction that began before then and holds an id.
 * Once the day has ended and no such transaction is open in this database, every such row is
 * committed or rolled back, and each later statement's snapshot (READ COMMITTED) sees them all:
 * call this first in the transaction that sums the figures. A session whose start this role may
 * not see (`xact_start` null) counts as open. Nothing is guessed from clock margins; the same
 * database clock dates the spins and decides here.
 */
export async function settlementDayState(
  executor: Executor,
  reportDate: string,
  now?: Date,
): Promise<SettlementDayState> {
  const { end } = utcDayBounds(reportDate);
  const clock = now ? sql`${now.toISOString()}::timestamptz` : sql`clock_timestamp()`;
  const [row] = await executor.execute<{ now: string | Date; open: boolean }>(sql`
    select ${clock} as now, exists (
      select 1 from pg_stat_activity
      where datname = current_database() and pid <> pg_backend_pid() and backend_xid is not null
        and (xact_start is null or xact_start < ${end.toISOString()}::timestamptz)
    ) as open`);
  const at = new Date(row!.now);
  const ended = at >= end;
  return { now: at, ended, complete: ended && !row!.open };
}
