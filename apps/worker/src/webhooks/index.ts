import type { HostResolver } from "@outcomes/core";
import {
  createDatabase,
  DISPATCH_BATCH_SIZE,
  dispatchEvents,
  RolloutSwitch,
  WORKER_CONNECTION_LIMITS,
} from "@outcomes/db";
import { DELIVERIES_PER_BATCH, enqueueDeliveryBatches } from "@outcomes/queue";
import type { RoleStarter, WorkerContext } from "../context.js";
import { startQueueWorker } from "../queue-worker.js";
import { webhookBackoffStrategy } from "./backoff.js";
import { deliverProcessors } from "./deliver.js";
import { createWebhookHttpClient } from "./http-client.js";
import { startLoop } from "./loop.js";
import { queuePacedTurns, SendPacer } from "./pacing.js";
import { reconcileDeliveries, reconcileRecoveries } from "./reconcile.js";
import { recoverProcessor } from "./recover.js";

export interface WebhooksRoleOptions {
  /** DNS for webhook hosts (tests inject one; production uses the OS resolver). */
  resolve?: HostResolver;
  /** Sends in flight per process, shared by both kinds of delivery job; they wait on the network, not the CPU. */
  concurrency?: number;
  /** `webhook.deliver-batch` jobs run at once by this process (their sends share `concurrency`). */
  batchConcurrency?: number;
  /** Postgres connections of the role's own pool (two short statements per attempt). */
  databasePoolSize?: number;
  /** How often the outbox is polled when nobody calls `notifyEvents`. */
  pollIntervalMs?: number;
  reconcileIntervalMs?: number;
  /** How overdue an open delivery (or old a running recovery) must be before the reconciler looks for its job. */
  reconcileGraceMs?: number;
  /** Partners' recoveries run at once by this process, each a chunk per transaction. */
  recoveryConcurrency?: number;
  /** Failed deliveries per recovery transaction. */
  recoveryChunkSize?: number;
  /** Recoveries make their next chunk only while fewer deliveries than this wait to be sent. */
  recoveryQueueAhead?: number;
  /** BullMQ job lock (default WORKER_JOB_LOCK_MS); a killed worker's job is taken over after it lapses. */
  lockDurationMs?: number;
  stalledIntervalMs?: number;
  /** An endpoint answering this slowly on average is capped at `slowEndpointInFlight` sends at once here. */
  slowSendMs?: number;
  /** A slow endpoint's sends at once in this process; its other deliveries wait their turn (EndpointLoad). */
  slowEndpointInFlight?: number;
  /** The clock endpoint health reads (failing since, disabled at); tests move it instead of waiting days. */
  now?: () => Date;
}

const DEFAULTS = {
  // Measured with batches (bench-webhooks, 20,000 events): 64 in flight 1,286–1,414/s, 160 in flight
  // (one connection each) 2,182–2,273/s; the machine, not the receivers, bounds it from there.
  concurrency: 160,
  // Two batches' claims and sends overlap: one waits on Postgres while the other sends.
  batchConcurrency: 4,
  databasePoolSize: 16,
  pollIntervalMs: 300,
  reconcileIntervalMs: 60_000,
  reconcileGraceMs: 120_000,
  recoveryConcurrency: 2,
  // A chunk's transaction takes 0.15–0.35 s on the busy dev VM (most of it the new rows'
  // foreign-key checks): a delete of the webhook waits that long at most.
  recoveryChunkSize: 2000,
  // About 10 MB of Redis and, at ~1,200 deliveries/s, ~8 s of other partners' deliveries behind them.
  recoveryQueueAhead: 10_000,
  // A tenth of the sends in flight: a hanging endpoint (WEBHOOK_TIMEOUT_MS each) leaves the other
  // nine tenths to every other endpoint, and still gets 16 / 5 s ≈ 3 sends a second per process.
  slowSendMs: 2000,
  slowEndpointInFlight: 16,
} satisfies WebhooksRoleOptions;

/**
 * The `webhooks` role: fans outbox events out to deliveries (a poll loop plus `events.dispatch`
 * jobs), makes their first attempts (`webhook.deliver-batch` jobs) and retries
 * (`webhook.deliver` jobs, on WEBHOOK_RETRY_DELAYS_MS), runs partners' recoveries
 * (`webhook.recover` jobs), and re-queues any open delivery or running recovery whose job went
 * missing.
 */
export function webhooksRole(overrides: WebhooksRoleOptions = {}): RoleStarter {
  const options = { ...DEFAULTS, ...overrides };
  return async (ctx: WorkerContext) => {
    const { env, producers, logger } = ctx;
    // A pool of its own: the deliveries in flight would queue behind the process's shared 5
    // connections (measured: 330/s with them, 540/s with 16 on the dev VM), and a burst of webhooks
    // must not starve block generation running in the same process (`--role all`).
    const database = createDatabase(env.DATABASE_URL, {
      max: options.databasePoolSize,
      limits: WORKER_CONNECTION_LIMITS,
    });
    const db = database.db;
    // As many connections to one receiver as sends in flight: no request waits in the client's queue,
    // so WEBHOOK_TIMEOUT_MS measures the receiver alone.
    const http = createWebhookHttpClient({
      timeoutMs: env.WEBHOOK_TIMEOUT_MS,
      resolve: options.resolve,
      connectionsPerOrigin: options.concurrency,
      loopbackPorts: env.SANDBOX_LOOPBACK_PORTS,
    });
    const pacer = new SendPacer(ctx.redis, ctx.keys);
    const { deliver, deliverBatch } = deliverProcessors({
      db,
      http,
      producers,
      pacer,
      rollout: new RolloutSwitch(db),
      disableAfterHours: env.WEBHOOK_DISABLE_AFTER_HOURS,
      now: options.now ?? (() => new Date()),
      inFlight: options.concurrency,
      slowEndpoints: { slowSendMs: options.slowSendMs, slowInFlight: options.slowEndpointInFlight },
      delaysMs: env.WEBHOOK_RETRY_DELAYS_MS,
      timeoutMs: env.WEBHOOK_TIMEOUT_MS,
      logger,
    });

    const dispatch = async (): Promise<number> => {
      const result = await dispatchEvents(db, DISPATCH_BATCH_SIZE, DELIVERIES_PER_BATCH);
      // After the commit: a crash right here leaves open rows, which the reconciler re-queues.
      await enqueueDeliveryBatches(producers, result.batches);
      await queuePacedTurns(db, producers, pacer, result.paced);
      return result.events;
    };

    const worker = startQueueWorker(
      "webhooks",
      {
        "webhook.deliver": deliver,
        "events.dispatch": async () => {
          let total = 0;
          for (let batch = await dispatch(); batch > 0; batch = await dispatch()) total += batch;
          return { events: total };
        },
      },
      {
        ...ctx,
        concurrency: options.concurrency,
        lockDurationMs: options.lockDurationMs,
        stalledIntervalMs: options.stalledIntervalMs,
        // A delivery whose worker died is taken over; the attempt count in Postgres stays true.
        maxStalledCount: 3,
        backoffStrategy: webhookBackoffStrategy(env.WEBHOOK_RETRY_DELAYS_MS),
      },
    );

    const batchWorker = startQueueWorker(
      "webhook-batches",
      { "webhook.deliver-batch": deliverBatch },
      {
        ...ctx,
        concurrency: options.batchConcurrency,
        lockDurationMs: options.lockDurationMs,
        stalledIntervalMs: options.stalledIntervalMs,
        maxStalledCount: 3,
        logFailures: true,
      },
    );

    const recoveryWorker = startQueueWorker(
      "webhook-recovery",
      {
        "webhook.recover": recoverProcessor({
          db,
          producers,
          logger,
          chunkSize: options.recoveryChunkSize,
          queueAhead: options.recoveryQueueAhead,
          pacer,
        }),
      },
      {
        ...ctx,
        concurrency: options.recoveryConcurrency,
        lockDurationMs: options.lockDurationMs,
        stalledIntervalMs: options.stalledIntervalMs,
        logFailures: true,
        // A recovery of 200,000 deliveries takes a minute: a shutdown hands it back after one chunk.
        cancelOnClose: true,
      },
    );

    const poller = startLoop(
      "events.dispatch",
      options.pollIntervalMs,
      async () => (await dispatch()) === DISPATCH_BATCH_SIZE,
      logger,
    );
    const reconciler = startLoop(
      "webhook.reconcile",
      options.reconcileIntervalMs,
      async () => {
        const requeued = await reconcileDeliveries(db, producers, { graceMs: options.reconcileGraceMs });
        if (requeued > 0) logger.warn({ requeued }, "re-queued open deliveries whose job was missing");
        const recoveries = await reconcileRecoveries(db, producers, { graceMs: options.reconcileGraceMs });
        if (recoveries > 0) logger.warn({ recoveries }, "re-queued running recoveries whose job was missing");
        return false;
      },
      logger,
    );

    return {
      close: async () => {
        await Promise.all([poller.stop(), reconciler.stop()]);
        await Promise.all([worker.close(), batchWorker.close(), recoveryWorker.close()]);
        await http.close();
        await database.close();
      },
    };
  };
}

export const startWebhooksRole: RoleStarter = webhooksRole();
