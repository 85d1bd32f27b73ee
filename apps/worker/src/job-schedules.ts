import { JOBS, type JobName, type Producers } from "@outcomes/queue";
import type { RepeatOptions } from "bullmq";

/**
 * Upserts the BullMQ job scheduler `id`, which queues job `name` (no payload, its catalog options)
 * on `repeat`. Every worker upserts it at start; one id per deployment keeps one job per tick.
 */
export async function upsertJobSchedule(
  producers: Producers,
  id: string,
  name: JobName,
  repeat: Pick<RepeatOptions, "pattern" | "tz" | "every">,
): Promise<void> {
  const definition = JOBS[name];
  await producers.queues[definition.queue].upsertJobScheduler(id, repeat, {
    name,
    data: {},
    opts: definition.options,
  });
}
