import type { Producers } from "./producers.js";

/**
 * Asks for `blocks.generate` of a game. A burst of triggers (spins starting blocks, empty-queue
 * answers, registration) makes one job: BullMQ de-duplicates by id while a job is waiting, and
 * `keepLastIfActive` keeps exactly one follow-up when a trigger arrives during a running job, so a
 * drop that happens after the running job's last check is never lost.
 */
export async function enqueueGeneration(producers: Producers, gameId: number): Promise<string> {
  const job = await producers.add(
    "blocks.generate",
    { gameId },
    { deduplication: { id: generationDeduplicationId(gameId), keepLastIfActive: true } },
  );
  // A de-duplicated trigger answers with the job already waiting.
  return job.id ?? "";
}

export function generationDeduplicationId(gameId: number): string {
  return `blocks.generate:${gameId}`;
}

/**
 * How many `blocks` workers are connected now (BullMQ names its worker connections; `CLIENT LIST`
 * finds them). Where Redis refuses `CLIENT`, BullMQ answers one, so callers assume a worker.
 */
export async function blocksWorkerCount(producers: Producers): Promise<number> {
  return producers.queues.blocks.getWorkersCount();
}
