import { type Database, webhookDeliveries } from "@outcomes/db";
import { enqueueDeliveries, type Producers } from "@outcomes/queue";
import { and, asc, inArray, lt, sql } from "drizzle-orm";

/** One reconciler at a time across all workers (a Postgres advisory lock, released at commit). */
const RECONCILE_LOCK_KEY = 0x7768_6b72; // "whkr"

/**
 * Postgres is the record; a BullMQ job is how an open delivery gets its next attempt. This finds
 * open deliveries overdue by more than `graceMs` whose job is gone (Redis lost, a crash between
 * commit and enqueue) or finished without closing the row (a job that stalled past BullMQ's limit)
 * and queues them again under the same job id. Returns how many it queued again.
 */
export async function reconcileDeliveries(
  db: Database,
  producers: Producers,
  options: { graceMs: number; limit?: number },
): Promise<number> {
  return db.transaction(async (tx) => {
    const [lock] = await tx.execute<{ locked: boolean }>(
      sql`select pg_try_advisory_xact_lock(${RECONCILE_LOCK_KEY}) as locked`,
    );
    if (!lock?.locked) return 0;
    const overdue = await tx
      .select({ id: webhookDeliveries.id })
      .from(webhookDeliveries)
      .where(
        and(
          inArray(webhookDeliveries.status, ["pending", "retrying"]),
          lt(webhookDeliveries.nextAttemptAt, new Date(Date.now() - options.graceMs)),
        ),
      )
      .orderBy(asc(webhookDeliveries.nextAttemptAt))
      .limit(options.limit ?? 500);
    const queue = producers.queues.webhooks;
    const lost: string[] = [];
    for (const { id } of overdue) {
      const state = await queue.getJobState(id);
      if (state === "completed" || state === "failed") {
        await queue.remove(id);
        lost.push(id);
      } else if (state === "unknown") {
        lost.push(id);
      }
    }
    await enqueueDeliveries(producers, lost);
    return lost.length;
  });
}
