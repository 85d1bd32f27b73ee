import type { RedisKeys } from "@outcomes/queue";
import type { Redis } from "ioredis";

/** Items per RPUSH command inside one MULTI (keeps each command's argument list modest). */
const PUSH_CHUNK = 2_000;

/**
 * The game's Redis outcome list (served from the left by LPOP) and its marker: the sequence of the
 * last block loaded into the list. Both change together in one MULTI, so after any crash or Redis
 * loss they agree:
 * - marker absent, blocks sealed in Postgres: the list was lost (restart without persistence,
 *   flush) or never loaded, and is rebuilt from Postgres;
 * - marker present, list empty: every loaded outcome was served (nothing to recover);
 * - marker below the last sealed sequence: a worker died between sealing and loading; the
 *   missing blocks are appended.
 * The marker shares the list's hash tag (`{gameId}`), so MULTI stays valid on a cluster.
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
  items: readonly string[],
  throughSequence: number,
): Promise<void> {
  const multi = redis.multi();
  pushAll(multi, keys.outcomeQueue(gameId), items);
  multi.set(loadedThroughKey(keys, gameId), String(throughSequence));
  await execOrThrow(multi);
}

/** Replaces the whole list (a rebuild from Postgres) and sets the marker, atomically. */
export async function replaceOutcomes(
  redis: Redis,
  keys: RedisKeys,
  gameId: number,
  items: readonly string[],
  throughSequence: number,
): Promise<void> {
  const multi = redis.multi();
  multi.del(keys.outcomeQueue(gameId));
  pushAll(multi, keys.outcomeQueue(gameId), items);
  multi.set(loadedThroughKey(keys, gameId), String(throughSequence));
  await execOrThrow(multi);
}

type Multi = ReturnType<Redis["multi"]>;

function pushAll(multi: Multi, key: string, items: readonly string[]): void {
  for (let start = 0; start < items.length; start += PUSH_CHUNK) {
    multi.rpush(key, ...items.slice(start, start + PUSH_CHUNK));
  }
}

async function execOrThrow(multi: Multi): Promise<void> {
  const results = await multi.exec();
  if (!results) throw new Error("outcome list transaction was aborted");
  const failed = results.find(([error]) => error);
  if (failed) throw failed[0];
}
