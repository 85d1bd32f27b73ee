import { ENVIRONMENTS, WEBHOOK_MAX_ATTEMPTS } from "@outcomes/core";
import type { JobsOptions } from "bullmq";
import { z } from "zod";

/**
 * Every BullMQ queue and job of the service: name → payload schema + default job options.
 * Producers and workers both go through this table, so a job's shape is checked at both ends.
 */
export const QUEUE_NAMES = [
  "blocks",
  "webhooks",
  "webhook-batches",
  "webhook-recovery",
  "settlements",
  "key-expiry",
] as const;
export type QueueName = (typeof QUEUE_NAMES)[number];

/** Fan-out's deliveries per `webhook.deliver-batch` job (their first attempts). */
export const DELIVERIES_PER_BATCH = 100;

const removeOld = { removeOnComplete: { age: 24 * 3600, count: 1000 }, removeOnFail: { age: 7 * 24 * 3600 } };

/** Up to `attempts` runs, backing off exponentially from `delayMs`; finished jobs kept a day, failed ones a week. */
const retried = (attempts: number, delayMs: number): JobsOptions => ({
  attempts,
  backoff: { type: "exponential", delay: delayMs },
  ...removeOld,
});

/** A job run on a schedule: one attempt (the next run redoes a failed one), the last 100 finished kept. */
const scheduled: JobsOptions = { attempts: 1, removeOnComplete: { count: 100 }, removeOnFail: { age: 24 * 3600 } };

export const JOBS = {
  "blocks.generate": {
    queue: "blocks",
    payload: z.object({ gameId: z.number().int().positive() }),
    options: retried(5, 1000),
  },
  // The reveal sweep (packages/blocks/src/reveal.ts), every few seconds: a failed run is simply
  // redone by the next one.
  "blocks.reveal": {
    queue: "blocks",
    payload: z.object({}),
    options: scheduled,
  },
  "events.dispatch": {
    queue: "webhooks",
    payload: z.object({ eventId: z.string().optional() }),
    options: retried(10, 500),
  },
  "webhook.deliver": {
    queue: "webhooks",
    payload: z.object({
      deliveryId: z.string(),
      // A paced webhook's delivery: the attempt whose send slot is reserved for when the job is due.
      // Added in release 3, written only once its pacing is on (release 2 would drop it: no harm).
      pacedAttempt: z.number().int().positive().optional(),
    }),
    // The waits between the attempts are WEBHOOK_RETRY_DELAYS_MS, applied by the webhooks
    // worker's custom backoff strategy (so a changed schedule needs no re-enqueue).
    options: { attempts: WEBHOOK_MAX_ATTEMPTS, backoff: { type: "webhook-schedule" }, ...removeOld },
  },
  // The first attempts of up to DELIVERIES_PER_BATCH deliveries fan-out made (job id: their
  // `batch_id`): one job, not one per delivery. A delivery that fails is handed to a
  // `webhook.deliver` job of its own for its retries. A queue of its own, like recover's.
  "webhook.deliver-batch": {
    queue: "webhook-batches",
    payload: z.object({ deliveryIds: z.array(z.string()).min(1).max(DELIVERIES_PER_BATCH) }),
    // A re-run claims only deliveries still without an attempt, so none is sent twice by it.
    options: retried(5, 1000),
  },
  // A partner's recover, run by the webhooks role a chunk per transaction from its Postgres record
  // (webhook_recoveries), which it resumes from after a crash. A queue of its own: the previous
  // release's webhooks workers take every job of the `webhooks` queue and would refuse this one.
  "webhook.recover": {
    queue: "webhook-recovery",
    payload: z.object({ recoveryId: z.string() }),
    // After the last attempt the reconciler queues it again: the record says it is still running.
    options: retried(8, 5000),
  },
  "settlement.generate": {
    queue: "settlements",
    payload: z.object({
      reportDate: z.string().optional(),
      partnerId: z.string().optional(),
      environment: z.enum(ENVIRONMENTS).optional(),
    }),
    options: retried(5, 5000),
  },
  "settlement.rollup": {
    queue: "settlements",
    payload: z.object({}),
    // Runs every minute: a failed step is simply redone by the next one, and a minute's worth of
    // finished jobs is all anyone needs to look at.
    options: scheduled,
  },
  "key-expiry.sweep": {
    queue: "key-expiry",
    payload: z.object({}),
    options: retried(5, 5000),
  },
  // Housekeeping, run by the key-expiry role: makes the time partitions ahead and drops the
  // idempotency records' expired days (docs/partitioning.md).
  "partitions.maintain": {
    queue: "key-expiry",
    payload: z.object({}),
    // A failed run is simply redone by the next tick (or an operator's trigger).
    options: scheduled,
  },
} as const satisfies Record<string, { queue: QueueName; payload: z.ZodType; options: JobsOptions }>;

export type JobName = keyof typeof JOBS;
export type JobPayload<N extends JobName> = z.infer<(typeof JOBS)[N]["payload"]>;

/** The jobs the table above puts on queue `Q`. */
export type QueueJobName<Q extends QueueName> = {
  [N in JobName]: (typeof JOBS)[N]["queue"] extends Q ? N : never;
}[JobName];
