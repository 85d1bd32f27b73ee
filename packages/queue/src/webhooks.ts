import { JOBS } from "./catalog.js";
import { lostJobs, type Producers } from "./producers.js";

/**
 * Tells the `webhooks` worker that events were committed to the outbox, so it fans them out now
 * instead of at its next poll (a few hundred ms). Optional and safe to drop: it never throws, and
 * a burst of calls collapses into one queued dispatch job. Call it after the commit, not inside it.
 */
export async function notifyEvents(producers: Producers): Promise<void> {
  try {
    await producers.add(
      "events.dispatch",
      {},
      {
        // One dispatch queued at a time; a hint arriving while one runs queues exactly one more.
        deduplication: { id: "events.dispatch", keepLastIfActive: true },
      },
    );
  } catch {
    // The poller picks the events up anyway; the caller's request must not fail for a hint.
  }
}

/**
 * Queues one `webhook.deliver` job per delivery row. The job id is the delivery id, so enqueueing a
 * delivery twice (a fan-out re-run, the reconciler) never sends it twice.
 */
export async function enqueueDeliveries(producers: Producers, deliveryIds: string[]): Promise<void> {
  await producers.addBulk(
    "webhook.deliver",
    deliveryIds.map((deliveryId) => ({ payload: { deliveryId }, options: { jobId: deliveryId } })),
  );
}

/**
 * Queues paced webhooks' new deliveries, each a `webhook.deliver` job of its own delayed to the send
 * slot reserved for its first attempt (`pacedAttempt: 1`); the job id is the delivery id.
 */
export async function enqueuePacedDeliveries(
  producers: Producers,
  turns: ReadonlyArray<{ deliveryId: string; delayMs: number }>,
): Promise<void> {
  await producers.addBulk(
    "webhook.deliver",
    turns.map(({ deliveryId, delayMs }) => ({
      payload: { deliveryId, pacedAttempt: 1 },
      options: { jobId: deliveryId, delay: delayMs },
    })),
  );
}

/**
 * Queues fan-out's batches, one `webhook.deliver-batch` job each; the job id is the batch id, so
 * queueing a batch twice runs it once.
 */
export async function enqueueDeliveryBatches(
  producers: Producers,
  batches: ReadonlyArray<{ batchId: string; deliveryIds: string[] }>,
): Promise<void> {
  await producers.addBulk(
    "webhook.deliver-batch",
    batches.map(({ batchId, deliveryIds }) => ({ payload: { deliveryIds }, options: { jobId: batchId } })),
  );
}

/**
 * Queues the retries of a delivery whose first attempt a batch made: its own `webhook.deliver`
 * job (job id the delivery id), run after `delayMs`; or, for a paced webhook, its first attempt at
 * the send slot reserved for it (`pacedAttempt`). A finished job of that id (one that found the
 * delivery claimed by the batch) is replaced: queueing beside it would be ignored. A job of that id
 * still to run is kept, and makes the attempt.
 */
export async function enqueueDeliveryRetry(
  producers: Producers,
  deliveryId: string,
  delayMs: number,
  pacedAttempt?: number,
): Promise<void> {
  const [lost] = await lostJobs(producers.queues[JOBS["webhook.deliver"].queue], [deliveryId]);
  if (!lost) return;
  const payload = pacedAttempt === undefined ? { deliveryId } : { deliveryId, pacedAttempt };
  await producers.add("webhook.deliver", payload, { jobId: deliveryId, delay: delayMs });
}

/**
 * Queues the `webhook.recover` job of a recovery recorded in Postgres. The job id is the recovery
 * id, so the request and the reconciler queueing it both make one job.
 */
export async function enqueueRecovery(producers: Producers, recoveryId: string): Promise<void> {
  await producers.add("webhook.recover", { recoveryId }, { jobId: recoveryId });
}
