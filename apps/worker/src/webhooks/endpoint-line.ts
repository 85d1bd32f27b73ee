import type { Producers, RedisClient, RedisKeys } from "@outcomes/queue";
import type { Logger } from "@outcomes/runtime";

/**
 * One endpoint's sends in flight, capped across every webhooks worker (WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT,
 * CONTRACT §18 isolation), and the line of its deliveries waiting for one. Three keys per webhook,
 * one hash tag, on Redis's clock:
 *
 * - `sends`: a sorted set of the deliveries being sent, scored by when their lease lapses (a worker
 *   that died mid-send gives its slot back after WEBHOOK_TIMEOUT_MS and a margin);
 * - `line`: the deliveries waiting, scored by when they joined (µs), so they go in that order;
 * - `line-deadlines`: by when each waiting delivery must be back; one that is not (its job lost) loses
 *   its place when it reaches the head, so a lost job never holds the line for good.
 *
 * The prelude drops lapsed leases and the head's late waiters. KEYS: sends, line, deadlines.
 */
const PRELUDE = `
local sends, line, deadlines = KEYS[1], KEYS[2], KEYS[3]
local t = redis.call('TIME')
local nowUs = tonumber(t[1]) * 1000000 + tonumber(t[2])
local now = math.floor(nowUs / 1000)
redis.call('ZREMRANGEBYSCORE', sends, '-inf', now)
while true do
  local head = redis.call('ZRANGE', line, 0, 0)[1]
  if not head then break end
  if tonumber(redis.call('HGET', deadlines, head) or '0') >= now then break end
  redis.call('ZREM', line, head)
  redis.call('HDEL', deadlines, head)
end
local function stretch(key, ms)
  if redis.call('PTTL', key) < ms then redis.call('PEXPIRE', key, ms) end
end
`;

/**
 * ARGV: delivery, cap, lease ms, patience ms. A slot is the delivery's when fewer than `cap` are
 * taken and it is among the first of the line to fit (or the line is shorter than the free slots):
 * {-1, 0}. Otherwise it joins the line (or keeps its place) and gets the ms after which it comes
 * back at the latest, one lease per `cap` deliveries ahead of it (a release wakes it sooner), and
 * how long the endpoint's oldest send in flight has been waiting for its answer.
 */
const TAKE = `${PRELUDE}
local id, cap, lease, patience = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local free = cap - redis.call('ZCARD', sends)
local rank = redis.call('ZRANK', line, id)
local ahead = rank or redis.call('ZCARD', line)
if redis.call('ZSCORE', sends, id) or (free > 0 and ahead < free) then
  redis.call('ZADD', sends, now + lease, id)
  redis.call('ZREM', line, id)
  redis.call('HDEL', deadlines, id)
  stretch(sends, lease)
  return {-1, 0}
end
if not rank then redis.call('ZADD', line, string.format('%d', nowUs), id) end
local wait = math.ceil((ahead + 1) / cap) * lease
redis.call('HSET', deadlines, id, now + wait + patience)
stretch(line, wait + patience)
stretch(deadlines, wait + patience)
local oldest = redis.call('ZRANGE', sends, 0, 0, 'WITHSCORES')[2]
return {wait, oldest and (now - (tonumber(oldest) - lease)) or 0}
`;

/**
 * ARGV: delivery ('' for none), cap. The delivery gives its slot back or leaves the line; answers
 * the deliveries at the head of the line that fit in the free slots now: they are woken.
 */
const LEAVE = `${PRELUDE}
local id, cap = ARGV[1], tonumber(ARGV[2])
if id ~= '' then
  redis.call('ZREM', sends, id)
  redis.call('ZREM', line, id)
  redis.call('HDEL', deadlines, id)
end
local free = cap - redis.call('ZCARD', sends)
if free <= 0 then return {} end
return redis.call('ZRANGE', line, 0, free - 1)
`;

/** A delivery in line: back in `waitMs` at the latest; the endpoint's oldest send in flight is `oldestSendMs` old. */
export interface Turn {
  waitMs: number;
  oldestSendMs: number;
}

/**
 * A delivery that joined the line waits in its process (holding no send slot, `waitHere`) while the
 * endpoint answers within QUICK_ENDPOINT_MS (its oldest send in flight is younger), for at most
 * WAIT_HERE_MAX_MS; then in BullMQ's delayed set. A quick endpoint's burst or recover gets its slots
 * back within that, without a trip through the delayed set per delivery; a slow endpoint's
 * deliveries hold no batch job and no job slot for it.
 */
const QUICK_ENDPOINT_MS = 1_000;
const WAIT_HERE_MAX_MS = 2_000;

type WithLine = RedisClient & {
  takeEndpointSlot(...args: [string, string, string, string, number, number, number]): Promise<[number, number]>;
  leaveEndpointLine(...args: [string, string, string, string, number]): Promise<string[]>;
};

export interface EndpointLineOptions {
  /** WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT. */
  perEndpoint: number;
  /** How long a slot is held at most: WEBHOOK_TIMEOUT_MS and a margin. */
  leaseMs: number;
  /** How late past its deadline a waiting delivery may come back before it loses its place. */
  patienceMs?: number;
  /** Runs the jobs of these deliveries now (their turn has come). */
  wake: (deliveryIds: string[]) => void;
  logger: Logger;
}

/** See the scripts above; the webhooks worker's deliveries take a slot before each send. */
export class EndpointLine {
  private readonly redis: WithLine;
  /** Deliveries waiting in this process (`waitHere`): a send ending here wakes them directly. */
  private readonly waitingHere = new Map<string, () => void>();

  constructor(
    redis: RedisClient,
    private readonly keys: RedisKeys,
    private readonly options: EndpointLineOptions,
  ) {
    this.redis = redis as WithLine;
    if (typeof this.redis.takeEndpointSlot !== "function") {
      redis.defineCommand("takeEndpointSlot", { numberOfKeys: 3, lua: TAKE });
      redis.defineCommand("leaveEndpointLine", { numberOfKeys: 3, lua: LEAVE });
    }
  }

  private keysOf(webhookId: string): [string, string, string] {
    return [
      this.keys.webhookSends(webhookId),
      this.keys.webhookLine(webhookId),
      this.keys.webhookLineDeadlines(webhookId),
    ];
  }

  /**
   * Takes one of the endpoint's send slots for the delivery: null when it has one (send now, then
   * `leave`), else its turn in line (its place kept). With Redis unreachable it sends (the cap is
   * Redis's; the queues are down then anyway).
   */
  async take(webhookId: string, deliveryId: string): Promise<Turn | null> {
    try {
      const { perEndpoint, leaseMs, patienceMs = 60_000 } = this.options;
      const [waitMs, oldestSendMs] = await this.redis.takeEndpointSlot(
        ...this.keysOf(webhookId),
        deliveryId,
        perEndpoint,
        leaseMs,
        patienceMs,
      );
      return waitMs < 0 ? null : { waitMs, oldestSendMs };
    } catch (error) {
      this.options.logger.warn({ err: error, webhookId, deliveryId }, "endpoint send slot not taken; sending");
      return null;
    }
  }

  /** The delivery gives its slot or its place back; the deliveries whose turn it makes are woken. */
  async leave(webhookId: string, deliveryId: string): Promise<void> {
    await this.wakeAfter(webhookId, deliveryId);
  }

  /**
   * Waits in the process for the turn of a delivery that joined the line (see QUICK_ENDPOINT_MS):
   * woken when a send of this process ends and its turn has come, else it asks again every 10, 20,
   * 40… up to 100 ms (a send of another process ended). Null once it took a slot; else its turn in
   * line, to wait for in the delayed set.
   */
  async waitHere(webhookId: string, deliveryId: string, turn: Turn, maxMs = WAIT_HERE_MAX_MS): Promise<Turn | null> {
    const deadline = Date.now() + maxMs;
    let pauseMs = 10;
    let answer: Turn | null = turn;
    while (answer && answer.oldestSendMs < QUICK_ENDPOINT_MS && Date.now() < deadline) {
      await new Promise<void>((resolve) => {
        const woken = () => {
          clearTimeout(timer);
          this.waitingHere.delete(deliveryId);
          resolve();
        };
        const timer = setTimeout(woken, Math.min(pauseMs, deadline - Date.now()));
        this.waitingHere.set(deliveryId, woken);
      });
      pauseMs = Math.min(pauseMs * 2, 100);
      answer = await this.take(webhookId, deliveryId);
    }
    return answer;
  }

  /** Wakes the deliveries whose turn has come (one that joined the line as a slot came free). */
  async wakeDue(webhookId: string): Promise<void> {
    await this.wakeAfter(webhookId, "");
  }

  private async wakeAfter(webhookId: string, deliveryId: string): Promise<void> {
    try {
      const due = await this.redis.leaveEndpointLine(...this.keysOf(webhookId), deliveryId, this.options.perEndpoint);
      const elsewhere = due.filter((id) => {
        const here = this.waitingHere.get(id);
        here?.();
        return !here;
      });
      if (elsewhere.length > 0) this.options.wake(elsewhere);
    } catch (error) {
      // The lease lapses by itself; the line's deliveries come back at their deadlines.
      this.options.logger.warn({ err: error, webhookId, deliveryId }, "endpoint line not updated");
    }
  }
}

/**
 * Wakes waiting deliveries: each one's `webhook.deliver` job (the delivery id), delayed until its
 * latest return, is queued again at the front of the queue (`lifo`): BullMQ's `promote` would put
 * it behind every job waiting, a recover's thousands, while its slot stayed free for it. A job that
 * is not delayed (running, or not yet moved there) is left alone: the waiting delivery then wakes
 * the due ones itself once its job is delayed. Lost between the two steps (a crash), the delivery is
 * queued again by the reconciler, and loses its place in line at its deadline.
 */
export function wakeDeliveryJobs(producers: Producers): (deliveryIds: string[]) => void {
  const queue = producers.queues.webhooks;
  const wake = async (deliveryId: string) => {
    const job = await queue.getJob(deliveryId);
    if (!job || !(await job.isDelayed())) return;
    // Throws when a worker took it meanwhile (its lock): then it is running anyway.
    await job.remove();
    await producers.add("webhook.deliver", job.data, { jobId: deliveryId, lifo: true });
  };
  return (deliveryIds) => {
    for (const id of deliveryIds) void wake(id).catch(() => {});
  };
}
