import { type JobsOptions, Queue } from "bullmq";
import { JOBS, type JobName, type JobPayload, QUEUE_NAMES, type QueueName } from "./catalog.js";
import { bullPrefix, type RedisClient } from "./redis.js";

/** One BullMQ `Queue` per queue name, sharing a connection; `add` validates payloads by job name. */
export class Producers {
  readonly queues: Record<QueueName, Queue>;

  /** `prefix`: the deployment's REDIS_PREFIX. */
  constructor(connection: RedisClient, prefix: string) {
    this.queues = Object.fromEntries(
      QUEUE_NAMES.map((name) => [name, new Queue(name, { connection, prefix: bullPrefix(prefix) })]),
    ) as Record<QueueName, Queue>;
  }

  async add<N extends JobName>(name: N, payload: JobPayload<N>, options: JobsOptions = {}) {
    const job = JOBS[name];
    const data = job.payload.parse(payload);
    return this.queues[job.queue].add(name, data, { ...job.options, ...options });
  }

  /** Many jobs of one name in one round trip, each payload validated, each job's options (its id, a delay) over the catalog's. */
  async addBulk<N extends JobName>(
    name: N,
    jobs: ReadonlyArray<{ payload: JobPayload<N>; options: JobsOptions }>,
  ): Promise<void> {
    if (jobs.length === 0) return;
    const job = JOBS[name];
    await this.queues[job.queue].addBulk(
      jobs.map(({ payload, options }) => ({
        name,
        data: job.payload.parse(payload),
        opts: { ...job.options, ...options },
      })),
    );
  }

  async close(): Promise<void> {
    await Promise.all(Object.values(this.queues).map((queue) => queue.close()));
  }
}

/**
 * Which of these jobs, whose work Postgres says is not done, are lost: never queued or gone
 * (`unknown`), or finished anyway (a job that stalled past BullMQ's limit, failed its last attempt,
 * or found nothing to do then). Finished ones are removed, so the same job id can be queued again.
 */
export async function lostJobs(queue: Queue, ids: string[]): Promise<string[]> {
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
