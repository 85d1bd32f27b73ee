import { decodeQueuedOutcome, type QueuedOutcome, ServiceError } from "@outcomes/core";
import type { RedisKeys } from "@outcomes/queue";
import type { Redis } from "ioredis";

/** How long a partner should wait after KS-4203: generating a block takes about a second. */
export const EXHAUSTED_RETRY_AFTER_SECONDS = 2;

/**
 * An outcome that can never be recorded: unreadable, or of a block that was never sealed. The spin
 * path drops it (it is never given back) and takes the next one.
 */
export class UnusableOutcomeError extends Error {}

export interface TakenOutcome {
  outcome: QueuedOutcome;
  /** The list item exactly as popped, so a failed spin can put back the very same bytes. */
  raw: string;
}

/**
 * A game's serving queue in Redis: one LPOP per spin (atomic, so two API processes never get the
 * same item), and LPUSH to give an item back to the front when its spin did not commit.
 */
export class OutcomeQueue {
  constructor(
    private readonly redis: Redis,
    private readonly keys: RedisKeys,
  ) {}

  /** The next outcome; KS-4203 when the list is empty, KS-5003 when Redis cannot be reached. */
  async take(gameId: number): Promise<TakenOutcome> {
    let raw: string | null;
    try {
      raw = await this.redis.lpop(this.keys.outcomeQueue(gameId));
    } catch (error) {
      throw new ServiceError("KS-5003", { cause: error });
    }
    if (raw === null) {
      throw new ServiceError("KS-4203", { retryAfterSeconds: EXHAUSTED_RETRY_AFTER_SECONDS });
    }
    try {
      return { outcome: decodeQueuedOutcome(raw), raw };
    } catch (error) {
      throw new UnusableOutcomeError(`unreadable queue item: ${raw.slice(0, 200)}`, { cause: error });
    }
  }

  /** Puts an unused outcome back at the front, so it is the next one served. */
  async giveBack(gameId: number, taken: TakenOutcome): Promise<void> {
    await this.redis.lpush(this.keys.outcomeQueue(gameId), taken.raw);
  }
}
