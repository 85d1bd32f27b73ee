import type { ReservedSql, Sql } from "postgres";
import { eventually } from "./processes.js";

/**
 * Holds a table lock in an open transaction, so a worker's job stops mid-way at its next statement
 * on that table: the test then kills the worker at a known point instead of racing it.
 */
export async function holdTableLock(sql: Sql, table: string, mode: string): Promise<{ release: () => Promise<void> }> {
  const reserved: ReservedSql = await sql.reserve();
  await reserved`begin`;
  await reserved.unsafe(`lock table ${table} in ${mode} mode`);
  return {
    release: async () => {
      await reserved`commit`;
      reserved.release();
    },
  };
}

/** Waits until some other session is blocked on a lock of `table` (the job is mid-way). */
export async function waitForLockWaiter(sql: Sql, table: string, timeoutMs = 20_000): Promise<void> {
  await eventually(
    async () => {
      const [row] = await sql<{ waiting: number }[]>`
        select count(*)::int as waiting from pg_locks where not granted and relation = ${table}::regclass`;
      return (row?.waiting ?? 0) > 0;
    },
    timeoutMs,
    `a session waiting on ${table}`,
  );
}
