import { compactItemPrefix } from "@outcomes/core";
import { blocks, games } from "@outcomes/db";
import { eachApart } from "@outcomes/runtime";
import { sql } from "drizzle-orm";
import { RETIRE_AFTER_MS, RETIRED_MARKER_TTL_MS, type RevealDeps } from "./retirement.js";
import { lockGame } from "./seal.js";

/** Long past RETIRE_AFTER_MS; a sweep that pauses longer only makes the block wait again. */
const GONE_SINCE_TTL_MS = 10 * RETIRE_AFTER_MS;

/**
 * KEYS: the game's list, the block's "gone since" time, its retirement marker (one hash tag).
 * ARGV: now, RETIRE_AFTER_MS, the two TTLs, the prefix of the block's items.
 * Answers -1 when an item of the block is in the list, else since when none has been (now, the
 * first time). The list is read when the block is first seen and when its wait is over, not in
 * between: one pass of LRANGE pages, whatever the number of entries missing. Once the wait is
 * over the retirement marker is set in the same step, so none of them can be given back after the
 * list was last seen without them.
 */
const GONE_SINCE_SCRIPT = `
local now = tonumber(ARGV[1])
local since = redis.call('GET', KEYS[2])
if since and now - tonumber(since) < tonumber(ARGV[2]) then return tonumber(since) end
local prefix, length, from = ARGV[5], #ARGV[5], 0
repeat
  local page = redis.call('LRANGE', KEYS[1], from, from + 999)
  for i = 1, #page do
    if string.sub(page[i], 1, length) == prefix then
      redis.call('DEL', KEYS[2])
      return -1
    end
  end
  from = from + 1000
until #page < 1000
if not since then
  redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[3])
  return now
end
redis.call('SET', KEYS[3], ARGV[1], 'NX', 'PX', ARGV[4])
redis.call('DEL', KEYS[2])
return tonumber(since)`;

type Passed = { id: string; game_id: number; partner_id: string; environment: string };

/**
 * A block is marked exhausted when its last index is committed. When the spin holding that index
 * never commits (its API process died between LPOP and commit, or its give-back failed), the block
 * would stay `serving` (`ready` if index 0 went the same way) for ever and never be revealed. Such
 * a block is found once a later block of its game has started: the list had then served past it,
 * so each of its unused entries is in the list (given back), in flight, or lost. Once no item of
 * the block has been in the list for RETIRE_AFTER_MS, the block is marked exhausted as of when that
 * was first seen, and the usual retirement (reveal.ts) closes and reveals it RETIRE_SETTLE_MS later.
 *
 * Why no spin in flight can commit one of its entries after the reveal: the retirement marker is set
 * in the same script that last sees the list without them (GONE_SINCE_SCRIPT), so none goes back to
 * the list after that (a failed spin drops it instead, GIVE_BACK_SCRIPT in the API), and a spin
 * holding one took it before the marker; the reveal waits RETIRE_SETTLE_MS past the marker, longer
 * than a spin holds an outcome, and counts as retired only the entries no spin has used by then.
 * This is the reasoning of the stranded entries' retirement, which takes over from here. An entry
 * in the list is never retired by this path: the block is left alone, and waits again once it is
 * gone. A rebuild of a lost list (recovery.ts) queues its entries again, but only after Redis lost
 * the list and with it the marker and the time, so the wait starts over.
 */
export async function endLostBlocks(
  deps: RevealDeps,
  now: number,
): Promise<{ endedBlocks: number; waitingBlocks: number; failedBlocks: number }> {
  // bigint ids come back from postgres.js as strings.
  const passed = await deps.db.execute<Passed>(sql`
    select b.id, b.game_id, g.partner_id, g.environment
    from ${blocks} b join ${games} g on g.id = b.game_id
    where b.status <> 'exhausted' and b.closed_at is null and b.seed_hash is not null
      and exists (select 1 from ${blocks} later
        where later.game_id = b.game_id and later.sequence > b.sequence and later.status <> 'ready')`);
  const result = { endedBlocks: 0, waitingBlocks: 0, failedBlocks: 0 };
  const { failed } = await eachApart(
    passed,
    async (block) => {
      const state = await endIfLost(deps, block, now);
      if (state === "ended") result.endedBlocks++;
      else if (state === "waiting") result.waitingBlocks++;
    },
    (block, error) =>
      deps.logger.error({ err: error, blockId: block.id, gameId: block.game_id }, "lost-entry check failed"),
  );
  result.failedBlocks = failed;
  return result;
}

/**
 * Under the game's lock, as the retirement: no queue rebuild, and no other sweep, in between.
 * Another sweep that got here first, or the last index committing at last, leaves it "finished".
 */
async function endIfLost(
  deps: RevealDeps,
  block: Passed,
  now: number,
): Promise<"ended" | "waiting" | "queued" | "finished"> {
  const blockId = Number(block.id);
  return deps.db.transaction(async (lock) => {
    await lockGame(lock, block.game_id);
    const [open] = await lock.execute(sql`
      select 1 from ${blocks} where id = ${block.id} and status <> 'exhausted' and closed_at is null`);
    if (!open) return "finished";
    // Named by the game's owner: the same hash tag as the game's list (docs/redis-cluster.md).
    const game = { id: block.game_id, partnerId: block.partner_id, environment: block.environment };
    // EVAL, not a defined command: defining one while an auto-pipeline gathers commands breaks
    // that pipeline (redis/ioredis#1931), and the sweep runs every few seconds only. Blocks with a
    // seed are all in the binary form, so their items are compact.
    const since = (await deps.redis.eval(
      GONE_SINCE_SCRIPT,
      3,
      deps.keys.outcomeQueue(game),
      deps.keys.outcomesGoneSince(game, blockId),
      deps.keys.outcomesRetired(game, blockId),
      now,
      RETIRE_AFTER_MS,
      GONE_SINCE_TTL_MS,
      RETIRED_MARKER_TTL_MS,
      compactItemPrefix(blockId),
    )) as number;
    if (since < 0) return "queued";
    if (now - since < RETIRE_AFTER_MS) return "waiting";
    await lock.execute(sql`
      update ${blocks} set status = 'exhausted', exhausted_at = to_timestamp(${since}::float8 / 1000)
      where id = ${block.id} and status <> 'exhausted'`);
    return "ended";
  });
}
