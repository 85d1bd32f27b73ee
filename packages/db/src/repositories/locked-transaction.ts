import { sql } from "drizzle-orm";
import type { Database, Transaction } from "../client.js";

/**
 * Runs `work` in a transaction holding the advisory lock `lockKey` (released at its end), or
 * answers null at once, having run nothing, while another transaction holds it: one runner at a
 * time across every process, and the others skip their turn instead of queueing.
 */
export async function tryLockedTransaction<T>(
  db: Database,
  lockKey: number,
  work: (tx: Transaction) => Promise<T>,
): Promise<T | null> {
  return db.transaction(async (tx) => {
    const [lock] = await tx.execute<{ locked: boolean }>(sql`select pg_try_advisory_xact_lock(${lockKey}) as locked`);
    return lock?.locked ? work(tx) : null;
  });
}
