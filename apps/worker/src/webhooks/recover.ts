import { setTimeout as sleep } from "node:timers/promises";
import { type Database, recoverNextChunk } from "@outcomes/db";
import { enqueueDeliveries, type JobPayload, type Producers } from "@outcomes/queue";
import type { Logger } from "@outcomes/runtime";
import { type Job, UnrecoverableError, WaitingError } from "bullmq";
import type { JobRun } from "../queue-worker.js";
import type { SendPacer } from "./pacing.js";

export interface RecoverDeps {
  db: Database;
  producers: Producers;
  logger: Logger;
  /** Failed deliveries per transaction: a delete of the webhook waits for one chunk at most. */
  chunkSize: number;
  /**
   * The next chunk waits while the `webhooks` queue has this many deliveries waiting: a recovery
   * is made as fast as deliveries are sent, not faster (each job holds ~1 KB of Redis, and other
   * partners' deliveries queue behind those waiting).
   */
  queueAhead: number;
  /** A paced webhook's schedule: its recovery waits while its turns are booked far ahead. */
  pacer: SendPacer;
}

/** How often a recovery waiting for room looks at the queue again. */
const ROOM_POLL_MS = 250;

/**
 * A paced webhook's recovered deliveries wait for their turns as delayed jobs, which the waiting
 * count does not see: the next chunk waits while its turns are booked this far ahead (at 1/s, about
 * 60 jobs; at 1,000/s, a chunk or two more).
 */
const PACED_AHEAD_MS = 60_000;

/**
 * Resolves once the `webhooks` queue has fewer than `queueAhead` waiting jobs and the webhook's pace
 * (if any) is booked less than PACED_AHEAD_MS ahead, or the run is aborted.
 */
async function roomInQueue(deps: RecoverDeps, signal: AbortSignal | undefined, webhookId?: string): Promise<void> {
  const deliver = deps.producers.queues.webhooks;
  const full = async () =>
    (await deliver.getWaitingCount()) >= deps.queueAhead ||
    (webhookId !== undefined && (await deps.pacer.horizon(webhookId)) >= PACED_AHEAD_MS);
  while (!signal?.aborted && (await full())) {
    await sleep(ROOM_POLL_MS, undefined, { signal }).catch(() => {});
  }
}

/**
 * The `webhook.recover` job: a partner's recover, a chunk per transaction (`recoverNextChunk`)
 * until the recovery is done or its webhook deleted. Each chunk's new deliveries are queued after
 * its commit, as fan-out queues its own, while the next chunk is written (queueing 2,000 jobs
 * takes about as long as writing their rows); a crash in between leaves them open, and the
 * reconciler queues them. A retried or duplicated job resumes from the cursor its record holds;
 * a worker shutting down hands it back to the queue after the chunk in hand.
 */
export function recoverProcessor(deps: RecoverDeps) {
  return async ({ recoveryId }: JobPayload<"webhook.recover">, job: Job<unknown>, run: JobRun) => {
    const started = performance.now();
    deps.logger.info({ recoveryId, attempt: job.attemptsMade + 1 }, "recovery started");
    let made = 0;
    let queueing: Promise<void> = Promise.resolve();
    let webhookId: string | undefined;
    for (;;) {
      // With the previous chunk's jobs still being queued: at most 2 chunks past `queueAhead`.
      await roomInQueue(deps, run.signal, webhookId);
      const step = run.signal?.aborted ? undefined : await recoverNextChunk(deps.db, recoveryId, deps.chunkSize);
      await queueing;
      if (step === null) throw new UnrecoverableError(`Recovery ${recoveryId} not found`);
      if (!step) {
        // Back to waiting, no attempt spent: the next worker resumes from the cursor.
        await job.moveToWait(run.token);
        deps.logger.info({ recoveryId, made }, "recovery handed back: worker closing");
        throw new WaitingError();
      }
      queueing = enqueueDeliveries(deps.producers, step.deliveryIds);
      // Awaited after the next chunk is written; a failure meanwhile must not count as unhandled.
      queueing.catch(() => {});
      made += step.deliveryIds.length;
      webhookId = step.recovery.webhookId;
      const { status, counted, redelivered } = step.recovery;
      if (status === "running") {
        await job.updateProgress({ status, redelivered, counted });
        deps.logger.debug(
          { recoveryId, webhookId, chunk: step.deliveryIds.length, redelivered, counted },
          "recovery chunk",
        );
        continue;
      }
      await queueing;
      await job.updateProgress({ status, redelivered, counted });
      const ms = Math.round(performance.now() - started);
      deps.logger.info({ recoveryId, webhookId, status, redelivered, counted, made, ms }, "recovery finished");
      return { status, redelivered, counted, made };
    }
  };
}
