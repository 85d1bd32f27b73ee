import { type Database, overdueDeliveries, runningRecoveries, tryLockedTransaction } from "@outcomes/db";
import { enqueueDeliveries, enqueueRecovery, type Producers } from "@outcomes/queue";
import type { Queue } from "bullmq";

/** One reconciler at a time across all workers (a Postgres advisory lock, released at commit). */
const RECONCILE_LOCK_KEY = 0x7768_6b72; // "whkr"
const RECOVERY_RECONCILE_LOCK_KEY = 0x7263_7672; // "rcvr"

/**
 * Which of these jobs are lost: never queued or gone (`unknown`), or finished while Postgres says
 * their work is not (a job that stalled past BullMQ's limit, or failed its last attempt). Finished
 * ones are removed, so the same job id can be queued again.
 */
async function lostJobs(queue: Queue, ids: string[]): Promise<string[]> {
  const lost: string[] = [];
  for (const id of ids) {
    const state = await queue.getJobState(id);
    if (state === "completed" || state === "failed") {
      await queue.remove(id);
      lost.push(id);
    } else if (state === "unknown") {
      lost.push(id);
    }
  }
  return lost;
}

/**
 * Postgres is the record; a BullMQ job is how an open delivery gets its next attempt: its batch's
 * job while it has had no attempt, else a job of its own. This finds open deliveries overdue by
 * more than `graceMs` whose job is gone (Redis lost, a crash between commit and enqueue) or
 * finished without closing the row (a job that stalled past BullMQ's limit) and queues a job of
 * their own, the delivery id its job id. A batch still waiting in a backlog keeps its deliveries:
 * queueing them again would send them twice. Returns how many it queued.
 */
export async function reconcileDeliveries(
  db: Database,
  producers: Producers,
  options: { graceMs: number; limit?: number },
): Promise<number> {
  const requeued = await tryLockedTransaction(db, RECONCILE_LOCK_KEY, async (tx) => {
    const overdue = await overdueDeliveries(tx, new Date(Date.now() - options.graceMs), options.limit ?? 500);
    const batchOf = (delivery: (typeof overdue)[number]) => (delivery.attempts === 0 ? delivery.batchId : null);
    const batchIds = [...new Set(overdue.map(batchOf).filter((id) => id !== null))];
    const lostBatches = new Set(await lostJobs(producers.queues["webhook-batches"], batchIds));
    const unsent = overdue.filter((delivery) => {
      const batchId = batchOf(delivery);
      return batchId === null || lostBatches.has(batchId);
    });
    const lost = await lostJobs(
      producers.queues.webhooks,
      unsent.map((delivery) => delivery.id),
    );
    await enqueueDeliveries(producers, lost);
    return lost.length;
  });
  return requeued ?? 0;
}

/**
 * The same for partners' recoveries: a running recovery requested more than `graceMs` ago whose
 * `webhook.recover` job is lost (the request's enqueue failed after its commit, Redis lost it, or
 * it failed its last attempt) is queued again; the job resumes from the recovery's cursor.
 */
export async function reconcileRecoveries(
  db: Database,
  producers: Producers,
  options: { graceMs: number; limit?: number },
): Promise<number> {
  const requeued = await tryLockedTransaction(db, RECOVERY_RECONCILE_LOCK_KEY, async (tx) => {
    const running = await runningRecoveries(tx, new Date(Date.now() - options.graceMs), options.limit ?? 100);
    const lost = await lostJobs(producers.queues["webhook-recovery"], running);
    for (const id of lost) await enqueueRecovery(producers, id);
    return lost.length;
  });
  return requeued ?? 0;
}
