import { ErrorCode, parseQueueItem, type QueueItem, ServiceError } from "@outcomes/core";
import type { GameOwner, RedisClient, RedisKeys } from "@outcomes/queue";
import { type BucketDraw, drawAndTake } from "../ratelimit/index.js";

/** How long a partner should wait after KS-4203: generating a block takes about a second. */
const EXHAUSTED_RETRY_AFTER_SECONDS = 2;

/**
 * An outcome that can never be recorded: unreadable, or of a block that was never sealed. The spin
 * path drops it (it is never given back) and takes the next one.
 */
export class UnusableOutcomeError extends Error {}

export interface TakenOutcome {
  /** Where its outcome is, and the outcome or its entry's bytes (read with its block's codec when planned). */
  item: QueueItem;
  /** The list item exactly as popped, so a failed spin can put back the very same bytes. */
  raw: string;
  /** The list it was popped from, where it goes back. */
  queue: string;
  /** Set while its block's unused entries are retired: a failed spin then drops it (same hash tag as `queue`). */
  retiredMarker: string;
  /** Items left in the list after this one was taken (known when taken with the draw). */
  remaining: number | null;
}

type WithGiveBack = RedisClient & { giveBack(queue: string, retired: string, item: string): Promise<number> };

/** LPUSH the item back unless its block's unused entries are being retired (reveal.ts in @outcomes/blocks). */
const GIVE_BACK_SCRIPT = `
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
return redis.call('LPUSH', KEYS[1], ARGV[1])`;

export function withGiveBack(redis: RedisClient): WithGiveBack {
  const client = redis as WithGiveBack;
  if (typeof client.giveBack !== "function")
    redis.defineCommand("giveBack", { numberOfKeys: 2, lua: GIVE_BACK_SCRIPT });
  return client;
}

/**
 * A game's serving queue in Redis: one LPOP per spin (atomic, so two API processes never get the
 * same item; on the request path inside the rate-limit script), and LPUSH to give an item back to
 * the front when its spin did not commit.
 */
export class OutcomeQueue {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: RedisKeys,
  ) {}

  /**
   * The next outcome; null when the spin bucket refused (nothing taken), KS-4203 when the list is
   * empty, KS-5003 when Redis cannot be reached. With `bucket`, the spin bucket is drawn in the same
   * script (one round trip) and its draw left in it, as plain data; a request draws once: its later
   * takes (after an unusable outcome) come without it.
   */
  async take(game: GameOwner, bucket?: BucketDraw): Promise<TakenOutcome | null> {
    const queue = this.keys.outcomeQueue(game);
    let raw: string | null;
    let remaining: number | null = null;
    try {
      if (bucket) ({ raw, remaining } = await drawAndTake(this.redis, bucket, queue));
      else raw = await this.redis.lpop(queue);
    } catch (error) {
      throw new ServiceError(ErrorCode.SpinFailed, { cause: error });
    }
    if (bucket?.draw?.allowed === false) return null;
    if (raw === null) {
      throw new ServiceError(ErrorCode.OutcomeQueueEmpty, { retryAfterSeconds: EXHAUSTED_RETRY_AFTER_SECONDS });
    }
    try {
      const item = parseQueueItem(raw);
      return { item, raw, queue, retiredMarker: this.keys.outcomesRetired(game, item.blockId), remaining };
    } catch (error) {
      throw new UnusableOutcomeError(`unreadable queue item: ${raw.slice(0, 200)}`, { cause: error });
    }
  }

  /**
   * Puts an unused outcome back at the front, so it is the next one served; dropped instead when
   * its block is being retired (its seed is about to be shown).
   */
  async giveBack(taken: TakenOutcome): Promise<void> {
    await withGiveBack(this.redis).giveBack(taken.queue, taken.retiredMarker, taken.raw);
  }
}
