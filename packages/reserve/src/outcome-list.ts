import type { RedisKeys } from "@outcomes/queue";
import type { Redis } from "ioredis";

/**
 * Loads outcomes and moves the marker in one script (atomic, like MULTI): KEYS = list, marker;
 * ARGV = newline-separated items, the marker's new value, "1" to replace the list. The items travel
 * as one argument and are split inside Redis, which costs a fraction of sending 10,000 arguments
 * (ioredis encodes each one), and RPUSH takes them 1,000 at a time (Lua's unpack has a stack limit).
 */
const LOAD_OUTCOMES = `
local list, marker, blob = KEYS[1], KEYS[2], ARGV[1]
if ARGV[3] == '1' then redis.call('DEL', list) end
local batch, n, start, len = {}, 0, 1, #blob
while start <= len do
  local stop = string.find(blob, '\\n', start, true) or (len + 1)
  n = n + 1
  batch[n] = string.sub(blob, start, stop - 1)
  if n == 1000 then
    redis.call('RPUSH', list, unpack(batch, 1, n))
    n = 0
  end
  start = stop + 1
end
if n > 0 then redis.call('RPUSH', list, unpack(batch, 1, n)) end
redis.call('SET', marker, ARGV[2])
return redis.call('LLEN', list)
`;

/** Queue items, either one string each or already joined by newlines (`queuedItemsText`). */
export type OutcomeItems = readonly string[] | Buffer;

type WithLoad = Redis & {
  loadOutcomes(list: string, marker: string, blob: string | Buffer, through: string, replace: string): Promise<number>;
};

/** The script as an ioredis command (sent by SHA after its first use). */
function withLoad(redis: Redis): WithLoad {
  const client = redis as WithLoad;
  if (typeof client.loadOutcomes !== "function") {
    redis.defineCommand("loadOutcomes", { numberOfKeys: 2, lua: LOAD_OUTCOMES });
  }
  return client;
}

function blobOf(items: OutcomeItems): string | Buffer {
  return Buffer.isBuffer(items) ? items : (items as readonly string[]).join("\n");
}

/**
 * The game's Redis outcome list (served from the left by LPOP) and its marker: the sequence of the
 * last block loaded into the list. Both change together in one script (atomic), so after any crash or Redis
 * loss they agree:
 * - marker absent, blocks sealed in Postgres: the list was lost (restart without persistence,
 *   flush) or never loaded, and is rebuilt from Postgres;
 * - marker present, list empty: every loaded outcome was served (nothing to recover);
 * - marker below the last sealed sequence: a worker died between sealing and loading; the
 *   missing blocks are appended.
 * The marker shares the list's hash tag (`{gameId}`), so the script stays valid on a cluster.
 */
export function loadedThroughKey(keys: RedisKeys, gameId: number): string {
  return `${keys.outcomeQueue(gameId)}:loaded-through`;
}

export async function loadedThrough(redis: Redis, keys: RedisKeys, gameId: number): Promise<number | null> {
  const value = await redis.get(loadedThroughKey(keys, gameId));
  return value === null ? null : Number(value);
}

/** Appends outcomes (in serving order) and moves the marker to `throughSequence`, atomically. */
export async function appendOutcomes(
  redis: Redis,
  keys: RedisKeys,
  gameId: number,
  items: OutcomeItems,
  throughSequence: number,
): Promise<void> {
  const list = keys.outcomeQueue(gameId);
  await withLoad(redis).loadOutcomes(list, loadedThroughKey(keys, gameId), blobOf(items), String(throughSequence), "0");
}

/** Replaces the whole list (a rebuild from Postgres) and sets the marker, atomically. */
export async function replaceOutcomes(
  redis: Redis,
  keys: RedisKeys,
  gameId: number,
  items: OutcomeItems,
  throughSequence: number,
): Promise<void> {
  const list = keys.outcomeQueue(gameId);
  await withLoad(redis).loadOutcomes(list, loadedThroughKey(keys, gameId), blobOf(items), String(throughSequence), "1");
}
