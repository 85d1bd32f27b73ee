/**
 * A failed attempt that will be retried. It carries the attempt number recorded in Postgres,
 * which is the one the schedule follows: after a stalled job (a killed worker) BullMQ's own
 * counter can lag behind the attempts the receiver actually saw.
 */
export class AttemptFailedError extends Error {
  constructor(
    readonly attempt: number,
    message: string,
  ) {
    super(message);
    this.name = "AttemptFailedError";
  }
}

/** The wait after failed attempt `attempt` (1-based): `WEBHOOK_RETRY_DELAYS_MS[attempt - 1]`. */
export function retryDelayMs(delays: readonly number[], attempt: number): number {
  const index = Math.min(Math.max(attempt, 1), delays.length) - 1;
  return delays[index] ?? 0;
}

/**
 * BullMQ's `settings.backoffStrategy`: it receives the number of attempts made including the one
 * that just failed, so the wait is `delays[attemptsMade - 1]`, exactly the configured schedule.
 */
export function webhookBackoffStrategy(delays: readonly number[]) {
  return (attemptsMade: number, _type?: string, error?: Error): number =>
    retryDelayMs(delays, error instanceof AttemptFailedError ? error.attempt : attemptsMade);
}
