import { JOBS, type JobName, type JobPayload, type QueueJobName, type QueueName } from "@outcomes/queue";
import type { Env } from "@outcomes/runtime";
import { type BackoffStrategy, type Job, UnrecoverableError, Worker } from "bullmq";
import type { RunningRole, WorkerContext } from "./context.js";

/** The run of a job: BullMQ's lock token, and a signal aborted when the worker closes (`cancelOnClose`). */
export interface JobRun {
  token: string | undefined;
  signal: AbortSignal | undefined;
}

/** Runs one job; `payload` is the job's data parsed with its catalog schema. */
export type JobHandler<N extends JobName> = (
  payload: JobPayload<N>,
  job: Job<unknown>,
  run: JobRun,
) => Promise<unknown>;

/** One handler for every job the catalog puts on queue `Q`: a job without one is a type error. */
export type JobHandlers<Q extends QueueName> = { [N in QueueJobName<Q>]: JobHandler<N> };

export interface QueueWorkerOptions extends Pick<WorkerContext, "newConnection" | "bullPrefix" | "logger"> {
  env: Pick<Env, "WORKER_JOB_LOCK_MS">;
  /** Jobs run at once by this process. */
  concurrency: number;
  /**
   * BullMQ's job lock, WORKER_JOB_LOCK_MS unless given: a job whose worker died is moved back to
   * waiting by the next stalled check once its lock lapses, and another worker takes it.
   */
  lockDurationMs?: number;
  stalledIntervalMs?: number;
  maxStalledCount?: number;
  /** The strategy the queue's custom `backoff.type` names. */
  backoffStrategy?: BackoffStrategy;
  /** Log every failed attempt at error level, with its payload (catalog payloads are ids and dates). */
  logFailures?: boolean;
  /**
   * For long jobs that stop between steps and resume later: `close` aborts their run's signal
   * instead of waiting for them to end, so a shutdown waits one step, not the whole job.
   */
  cancelOnClose?: boolean;
}

/** A job this worker must not run, ever: no retry would make it runnable. */
class RefusedJobError extends UnrecoverableError {}

/**
 * Consumes `queue`: each job's name picks its handler and its data is parsed with the catalog's
 * schema before the handler runs. A job of another name or with a bad payload fails at once (no
 * retry) and is logged. `close` stops taking jobs, waits for the running ones, then closes the
 * worker's connection. It lives with the worker, not in packages/queue: only worker processes
 * consume queues (the API and CLI only produce), and it runs on the worker's context.
 */
export function startQueueWorker<Q extends QueueName>(
  queue: Q,
  handlers: JobHandlers<Q>,
  options: QueueWorkerOptions,
): RunningRole {
  const { logger } = options;
  const connection = options.newConnection();
  const worker = new Worker(
    queue,
    async (job: Job<unknown>, token?: string, signal?: AbortSignal) => {
      const parsed = parseJob(queue, handlers, job);
      if ("refused" in parsed) throw new RefusedJobError(parsed.refused);
      return parsed.handler(parsed.payload, job, { token, signal });
    },
    {
      connection,
      prefix: options.bullPrefix,
      concurrency: options.concurrency,
      lockDuration: options.lockDurationMs ?? options.env.WORKER_JOB_LOCK_MS,
      stalledInterval: options.stalledIntervalMs ?? options.env.WORKER_JOB_LOCK_MS,
      // BullMQ takes an `undefined` option over its default: only the given ones are passed.
      ...(options.maxStalledCount !== undefined && { maxStalledCount: options.maxStalledCount }),
      ...(options.backoffStrategy && { settings: { backoffStrategy: options.backoffStrategy } }),
    },
  );
  worker.on("error", (error) => logger.error({ err: error }, `${queue} worker error`));
  worker.on("failed", (job, error) => {
    const refused = error instanceof RefusedJobError;
    if (!refused && !options.logFailures) return;
    // A refused job's data is not what its name promises: only a parsed payload is logged.
    const parsed = job && !refused ? parseJob(queue, handlers, job) : undefined;
    const payload = parsed && "payload" in parsed ? parsed.payload : {};
    logger.error({ err: error, jobId: job?.id, ...payload }, `${job?.name ?? `${queue} job`} failed`);
  });

  return {
    close: async () => {
      if (options.cancelOnClose) worker.cancelAllJobs("worker closing");
      await worker.close();
      await connection.quit();
    },
  };
}

/** The job's handler and its payload parsed with the catalog's schema, or why the job is refused. */
function parseJob<Q extends QueueName>(queue: Q, handlers: JobHandlers<Q>, job: Job<unknown>) {
  const name = job.name;
  // JobHandlers holds exactly the queue's jobs, each taking its payload; at run time a name is any string.
  const handler = Object.hasOwn(handlers, name) ? (handlers as RuntimeHandlers)[name] : undefined;
  if (!handler || !isJobName(name)) return { refused: `Unknown job ${name} on the ${queue} queue` };
  const parsed = JOBS[name].payload.safeParse(job.data);
  if (!parsed.success) return { refused: `Invalid ${name} payload: ${parsed.error.message}` };
  return { handler, payload: parsed.data };
}

type RuntimeHandlers = Partial<Record<string, (payload: unknown, job: Job<unknown>, run: JobRun) => Promise<unknown>>>;

function isJobName(name: string): name is JobName {
  return Object.hasOwn(JOBS, name);
}
