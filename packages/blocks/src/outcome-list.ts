import type { GameOwner, RedisClient, RedisKeys } from "@outcomes/queue";
import { type ChainableCommander, Command } from "ioredis";
import { type RpushCommand, rpushOf } from "./rpush.js";

/**
 * An RPUSH written beforehand (`blockRpush`: the command and its items, framed as RESP) goes to
 * the socket as one buffer. ioredis would otherwise encode each of 10,000 arguments,
 * and a Lua script splitting one big argument costs Redis ~8× the RPUSH itself (docs/performance.md).
 */
class PrebuiltRpush extends Command {
  /** `list` is in `wire` already; as the argument it gives the command its slot on a cluster. */
  constructor(
    list: string,
    private readonly wire: Buffer,
  ) {
    super("rpush", [list]);
  }

  override toWritable(): Buffer {
    return this.wire;
  }
}

/** Queue items: one string each (tests, small loads) or prebuilt RPUSH commands of the list (`blockRpush`). */
export type OutcomeItems = readonly string[] | readonly RpushCommand[];

/** What loading outcomes into a game's list takes: where, which items, and the sequence they reach. */
type OutcomeLoad = [redis: RedisClient, keys: RedisKeys, game: GameOwner, items: OutcomeItems, throughSequence: number];

/**
 * Loads outcomes and moves the marker in one MULTI/EXEC (atomic): optionally DEL the list (a
 * rebuild), RPUSH the items, SET the marker.
 */
async function load(replace: boolean, ...[redis, keys, game, items, throughSequence]: OutcomeLoad): Promise<void> {
  const list = keys.outcomeQueue(game);
  const commands = items.every((item) => typeof item === "string")
    ? [rpushOf(list, items as readonly string[])]
    : (items as readonly RpushCommand[]);
  const tx = redis.multi();
  if (replace) tx.del(list);
  for (const command of commands) {
    if (command.count === 0) continue; // an RPUSH without items is an error
    // Pipeline#sendCommand queues a ready Command (public in ioredis, missing from its typings).
    (tx as ChainableCommander & { sendCommand(command: Command): void }).sendCommand(
      new PrebuiltRpush(list, command.wire),
    );
  }
  tx.set(keys.outcomesLoadedThrough(game), String(throughSequence));
  const results = await tx.exec();
  if (!results) throw new Error(`outcome load of game ${game.id} was discarded`);
  for (const [error] of results) if (error) throw error;
}

/**
 * The game's Redis outcome list (served from the left by LPOP) and its marker: the sequence of the
 * last block loaded into the list. Both change together in one MULTI/EXEC (atomic), so after any
 * crash or Redis loss they agree:
 * - marker absent, blocks sealed in Postgres: the list was lost (restart without persistence,
 *   flush) or never loaded, and is rebuilt from Postgres;
 * - marker present, list empty: every loaded outcome was served (nothing to recover);
 * - marker below the last sealed sequence: a worker died between sealing and loading; the
 *   missing blocks are appended.
 * The marker (`keys.outcomesLoadedThrough`) shares the list's hash tag, so the transaction stays
 * valid on a cluster.
 */
export async function loadedThrough(redis: RedisClient, keys: RedisKeys, game: GameOwner): Promise<number | null> {
  const value = await redis.get(keys.outcomesLoadedThrough(game));
  return value === null ? null : Number(value);
}

/** Appends outcomes (in serving order) and moves the marker to `throughSequence`, atomically. */
export async function appendOutcomes(...args: OutcomeLoad): Promise<void> {
  await load(false, ...args);
}

/** Replaces the whole list (a rebuild from Postgres) and sets the marker, atomically. */
export async function replaceOutcomes(...args: OutcomeLoad): Promise<void> {
  await load(true, ...args);
}
