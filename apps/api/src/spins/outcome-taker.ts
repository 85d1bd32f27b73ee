import { ErrorCode, parseQueueItem, ServiceError } from "@outcomes/core";
import type { GameOwner, RedisClient, RedisKeys } from "@outcomes/queue";
import type { Decision, RateLimiter } from "../ratelimit/index.js";

/** How long a partner should wait after KS-4203: generating a block takes about a second. */
const EXHAUSTED_RETRY_AFTER_SECONDS = 2;

/** KS-4203 with `Retry-After`: the game's list is empty (generation is asked for). */
export const queueEmpty = () =>
  new ServiceError(ErrorCode.OutcomeQueueEmpty, { retryAfterSeconds: EXHAUSTED_RETRY_AFTER_SECONDS });

/**
 * An outcome that can never be recorded: unreadable, or of a block that was never sealed or is
 * closed. The spin path drops it (it is never given back) and takes the next one.
 */
export class UnusableOutcomeError extends Error {}

/** An outcome popped from its game's list, as popped (the plan stage reads it). */
export interface TakenOutcome {
  /** The list item exactly as popped, so a failed spin can put back the very same bytes. */
  raw: string;
  game: GameOwner;
  /** Items left in the list after this one was taken. */
  remaining: number;
}

/**
 * The take stage's answer: the rate limiter's decision and, when admitted, the game's next outcome
 * (null when the list was empty, and always for a forced spin, which takes none).
 */
export type Taken = { decision: Decision; outcome: TakenOutcome | null };

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
 * The take stage: a spin's draw from its partner's spin bucket together with the pop of its game's
 * next outcome (one script call for all the spins of a turn, `TurnDraws`), so two API processes
 * never get the same item and a refused spin takes nothing. LPUSH gives an unused item back to the
 * front of its list.
 */
export class OutcomeTaker {
  constructor(
    private readonly limiter: RateLimiter,
    private readonly redis: RedisClient,
    private readonly keys: RedisKeys,
  ) {}

  /** The bucket's decision and, when admitted, the game's next outcome. */
  async take(game: GameOwner): Promise<Taken> {
    const { decision, item, remaining } = await this.limiter.limitAndTake(game, this.keys.outcomeQueue(game));
    return { decision, outcome: item === null ? null : { raw: item, game, remaining } };
  }

  /** A forced spin takes no outcome: the bucket's decision alone. */
  async admitOnly(game: GameOwner): Promise<Taken> {
    return { decision: await this.limiter.limit(game, "spin"), outcome: null };
  }

  /** The next outcome for a spin admitted already, whose earlier one could not be used; KS-4203 when none is left. */
  async takeAgain(game: GameOwner): Promise<TakenOutcome> {
    const { item, remaining } = await this.limiter.takeAgain(game, this.keys.outcomeQueue(game));
    if (item === null) throw queueEmpty();
    return { raw: item, game, remaining };
  }

  /**
   * Puts an unused outcome back at the front, so it is the next one served; dropped instead when
   * its block is being retired (its seed is about to be shown). Only readable items are given back.
   */
  async giveBack(taken: TakenOutcome): Promise<void> {
    const { blockId } = parseQueueItem(taken.raw);
    const queue = this.keys.outcomeQueue(taken.game);
    await withGiveBack(this.redis).giveBack(queue, this.keys.outcomesRetired(taken.game, blockId), taken.raw);
  }
}
