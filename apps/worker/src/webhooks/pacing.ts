import { type Database, type Dispatched, markDeliveriesPaced, sqlClientOf } from "@outcomes/db";
import { enqueuePacedDeliveries, type Producers, type RedisClient, type RedisKeys } from "@outcomes/queue";

/**
 * A paced webhook's send slots (`rateLimitPerSecond`, CONTRACT §18): a GCRA schedule in Redis, on
 * Redis's clock so every worker process shares it. Each call reserves the next free slot, evenly
 * spaced 1/rate apart (no burst: at most `rate` sends in any second), and answers how long until
 * it; the caller delays its job that long instead of holding a send slot. Slots are handed out in
 * the order asked for, so deliveries wait their turn in order. With a horizon (ARGV[3], µs), a slot
 * further ahead than that is not reserved (-1).
 */
const RESERVE = `
local key = KEYS[1]
local interval = 1000000 / tonumber(ARGV[1])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local slot = tonumber(redis.call('GET', key) or now)
if slot < now then slot = now end
if ARGV[3] and slot - now > tonumber(ARGV[3]) then return -1 end
local nextSlot = slot + interval * tonumber(ARGV[2])
redis.call('SET', key, string.format('%d', nextSlot), 'PX', math.ceil((nextSlot - now) / 1000) + 1000)
return slot - now
`;

/** How far ahead a webhook's schedule is booked, in ms (0 when its next slot is free now). */
const HORIZON = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local slot = tonumber(redis.call('GET', KEYS[1]) or now)
if slot < now then return 0 end
return math.floor((slot - now) / 1000)
`;

type WithPacing = RedisClient & {
  reserveWebhookSlot(key: string, ratePerSecond: number, count: number, horizonUs?: number): Promise<number>;
  webhookPaceHorizon(key: string): Promise<number>;
};

export class SendPacer {
  private readonly redis: WithPacing;

  constructor(
    redis: RedisClient,
    private readonly keys: RedisKeys,
  ) {
    this.redis = redis as WithPacing;
    if (typeof this.redis.reserveWebhookSlot !== "function") {
      redis.defineCommand("reserveWebhookSlot", { numberOfKeys: 1, lua: RESERVE });
      redis.defineCommand("webhookPaceHorizon", { numberOfKeys: 1, lua: HORIZON });
    }
  }

  /** Reserves the webhook's next send slot: the ms until it is due (0: send now). */
  async reserve(webhookId: string, ratePerSecond: number): Promise<number> {
    const [wait] = await this.reserveMany(webhookId, ratePerSecond, 1);
    return wait!;
  }

  /** Reserves the webhook's next slot if it comes within `horizonMs`: the ms until it; null when it would not. */
  async reserveWithin(webhookId: string, ratePerSecond: number, horizonMs: number): Promise<number | null> {
    const key = this.keys.webhookPace(webhookId);
    const waitUs = await this.redis.reserveWebhookSlot(key, ratePerSecond, 1, horizonMs * 1000);
    return waitUs < 0 ? null : Math.floor(waitUs / 1000);
  }

  /** Reserves the webhook's next `count` slots at once (fan-out's deliveries of it): the ms until each. */
  async reserveMany(webhookId: string, ratePerSecond: number, count: number): Promise<number[]> {
    const firstUs = await this.redis.reserveWebhookSlot(this.keys.webhookPace(webhookId), ratePerSecond, count);
    const intervalUs = 1_000_000 / ratePerSecond;
    return Array.from({ length: count }, (_, i) => Math.floor((firstUs + i * intervalUs) / 1000));
  }

  /** How long the slots already reserved for the webhook will take to be used, in ms. */
  horizon(webhookId: string): Promise<number> {
    return this.redis.webhookPaceHorizon(this.keys.webhookPace(webhookId));
  }
}

/**
 * Fan-out's deliveries to paced webhooks: each webhook's next slots reserved at once, in event order,
 * and each delivery queued as a job delayed to its slot, its `nextAttemptAt` the slot. So a paced
 * webhook's backlog costs one delayed job per delivery and never passes through the batches others'
 * deliveries wait in. After the commit: a crash in between leaves open rows for the reconciler.
 */
export async function queuePacedTurns(
  db: Database,
  producers: Producers,
  pacer: SendPacer,
  paced: Dispatched["paced"],
): Promise<void> {
  for (const { webhookId, ratePerSecond, deliveryIds } of paced) {
    const waits = await pacer.reserveMany(webhookId, ratePerSecond, deliveryIds.length);
    const now = Date.now();
    const turns = deliveryIds.map((deliveryId, i) => ({ deliveryId, delayMs: waits[i]! }));
    await enqueuePacedDeliveries(producers, turns);
    await markDeliveriesPaced(
      sqlClientOf(db),
      turns.map((turn) => ({ id: turn.deliveryId, at: new Date(now + turn.delayMs) })),
    );
  }
}
