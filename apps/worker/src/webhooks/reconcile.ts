import { type Database, overdueDeliveries, runningRecoveries, tryLockedTransaction } from "@outcomes/db";
import { enqueueDeliveries, enqueueDeliveryBatches, enqueueRecovery, lostJobs, type Producers } from "@outcomes/queue";

/** One reconciler at a time across all workers (a Postgres advisory lock, released at commit). */
const RECONCILE_LOCK_KEY = 0x7768_6b72; // "whkr"
const RECOVERY_RECONCILE_LOCK_KEY = 0x7263_7672; // "rcvr"

/**
 * Postgres is the record; a BullMQ job is how an open delivery gets its next attempt: its batch's
 * job (while the batch is queued or running, a delivery of it is the batch's, whatever its attempt
 * count: a send of it may be in flight), else a job of its own. This finds open deliveries overdue
 * by more than `graceMs` whose job is gone (Redis lost, a crash between commit and enqueue) or
 * finished without closing the row (a job that stalled past BullMQ's limit, or failed its last
 * attempt). A lost batch's deliveries with no attempt yet get their batch job again (its claim takes
 * first attempts only, so a send still running somewhere is not repeated); the others get a job of
 * their own, the delivery id its job id. Returns how many deliveries it queued.
 */
export async function reconcileDeliveries(
  db: Database,
  producers: Producers,
  options: { graceMs: number; limit?: number },
): Promise<number> {
  const requeued = await tryLockedTransaction(db, RECONCILE_LOCK_KEY, async (tx) => {
    const overdue = await overdueDeliveries(tx, new Date(Date.now() - options.graceMs), options.limit ?? 500);
    const batchIds = [...new Set(overdue.flatMap((delivery) => (delivery.batchId ? [delivery.batchId] : [])))];
    const lostBatches = new Set(await lostJobs(producers.queues["webhook-batches"], batchIds));
    const firstAttempts = new Map<string, string[]>();
    const ownJobs: string[] = [];
    for (const { id, batchId, attempts } of overdue) {
      if (batchId && !lostBatches.has(batchId)) continue;
      if (!batchId || attempts > 0) {
        ownJobs.push(id);
        continue;
      }
      const ids = firstAttempts.get(batchId);
      if (ids) ids.push(id);
      else firstAttempts.set(batchId, [id]);
    }
    // A paced delivery of a finished batch waits for its turn in a job of its own: not lost.
    const ownJobsOfFirsts = await lostJobs(producers.queues.webhooks, [...firstAttempts.values()].flat());
    const withoutJob = new Set(ownJobsOfFirsts);
    const batches = [...firstAttempts]
      .map(([batchId, deliveryIds]) => ({ batchId, deliveryIds: deliveryIds.filter((id) => withoutJob.has(id)) }))
      .filter((batch) => batch.deliveryIds.length > 0);
    await enqueueDeliveryBatches(producers, batches);
    const lost = await lostJobs(producers.queues.webhooks, ownJobs);
    await enqueueDeliveries(producers, lost);
    return lost.length + batches.reduce((sum, batch) => sum + batch.deliveryIds.length, 0);
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
