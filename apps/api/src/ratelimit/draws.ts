import type { RedisClient } from "@outcomes/queue";
import { Batcher } from "@outcomes/runtime";
import { type Draw, drawAt, GCRA_FUNCTION } from "./gcra.js";

/**
 * Every draw of one turn of the event loop in one script call per hash slot (KEYS: a bucket and a
 * list per draw, in one slot; ARGV: per draw its limit, 0 for no draw, and 1 to pop the list's next
 * item when the draw allows it, with the list's length after). Replies 6 values per draw:
 * allowed, remaining, resetMs, retryAfterMs, the item or false, the list's length.
 */
export const DRAWS_SCRIPT = `${GCRA_FUNCTION}
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local out = {}
for i = 1, #ARGV / 2 do
  local limit = tonumber(ARGV[2 * i - 1])
  local allowed, remaining, reset, retry = 1, 0, 0, 0
  if limit > 0 then allowed, remaining, reset, retry = gcra(KEYS[2 * i - 1], limit, now) end
  local item, length = false, 0
  if ARGV[2 * i] == '1' then
    if allowed == 1 then item = redis.call('LPOP', KEYS[2 * i]) end
    length = redis.call('LLEN', KEYS[2 * i])
  end
  local at = #out
  out[at + 1] = allowed
  out[at + 2] = remaining
  out[at + 3] = reset
  out[at + 4] = retry
  out[at + 5] = item
  out[at + 6] = length
end
return out`;

/** One draw: from a bucket (limit > 0) and/or of a list's next item, all keys under one hash tag. */
export interface DrawRequest {
  /** The hash tag of both keys: draws of one tag share a script call. */
  tag: string;
  bucketKey: string;
  /** Requests a second; 0 draws nothing from the bucket. */
  limit: number;
  /** The list to pop from when the draw allows it; null pops nothing. */
  list: string | null;
}

export interface DrawAnswer {
  /** Null when the request drew nothing from the bucket. */
  draw: Draw | null;
  /** The list's next item; null when refused, when nothing was asked of the list, or when it was empty. */
  item: string | null;
  /** Items left in the list after the pop. */
  remaining: number;
}

type WithDraws = RedisClient & { draws(...args: Array<string | number>): Promise<unknown[]> };

/** The command's name: its key count varies, so a cluster keeps it out of the auto-pipeline (see createRequestRedis). */
const DRAWS_COMMAND = "draws";

/**
 * The request path's client options: concurrent requests' scripts and LPOPs share socket writes
 * (auto-pipelining), but on a cluster not `draws`: its first argument is its key count, which
 * ioredis would take for a key, grouping it with commands of other slots (KS-5003 for all of them).
 */
export const REQUEST_REDIS_OPTIONS = { enableAutoPipelining: true, clusterUnpipelined: [DRAWS_COMMAND] };

/** DRAWS_SCRIPT as an ioredis command (EVALSHA; its first argument is the number of keys). */
export function withDraws(redis: RedisClient): WithDraws {
  const client = redis as WithDraws;
  if (typeof client.draws !== "function") redis.defineCommand(DRAWS_COMMAND, { lua: DRAWS_SCRIPT });
  return client;
}

/** Most draws in one turn's batch; more wait for the next turn. */
const MAX_DRAWS_PER_TURN = 512;

/**
 * The rate limiter's and the spin path's Redis work, per turn: the draws requested in one turn go
 * as one script call per hash tag (auto-pipelined together), not one call each.
 */
export class TurnDraws {
  private readonly batcher: Batcher<DrawRequest, DrawAnswer>;

  constructor(redis: RedisClient) {
    const scripted = withDraws(redis);
    this.batcher = new Batcher({ maxSize: MAX_DRAWS_PER_TURN, run: (requests) => runDraws(scripted, requests) });
  }

  draw(request: DrawRequest): Promise<DrawAnswer> {
    return this.batcher.submit(request);
  }
}

async function runDraws(redis: WithDraws, requests: DrawRequest[]): Promise<Array<DrawAnswer | Error>> {
  const byTag = new Map<string, number[]>();
  for (const [i, request] of requests.entries()) {
    const at = byTag.get(request.tag);
    if (at) at.push(i);
    else byTag.set(request.tag, [i]);
  }
  const answers: Array<DrawAnswer | Error> = new Array(requests.length);
  await Promise.all(
    [...byTag.values()].map(async (indexes) => {
      const keys: string[] = [];
      const args: Array<string | number> = [];
      for (const i of indexes) {
        const request = requests[i]!;
        keys.push(request.bucketKey, request.list ?? request.bucketKey);
        args.push(request.limit, request.list === null ? 0 : 1);
      }
      try {
        const reply = await redis.draws(keys.length, ...keys, ...args);
        for (const [j, i] of indexes.entries()) {
          const at = j * 6;
          answers[i] = {
            draw: requests[i]!.limit > 0 ? drawAt(reply, at) : null,
            item: (reply[at + 4] as string | null) || null,
            remaining: (reply[at + 5] as number | undefined) ?? 0,
          };
        }
      } catch (error) {
        for (const i of indexes) answers[i] = error as Error;
      }
    }),
  );
  return answers;
}
