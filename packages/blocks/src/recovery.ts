import { blocks, type Database, spinOutcomes } from "@outcomes/db";
import type { GameOwner, RedisClient, RedisKeys } from "@outcomes/queue";
import { sql } from "drizzle-orm";
import { appendOutcomes, loadedThrough, replaceOutcomes } from "./outcome-list.js";
import { blockRpush, type RpushCommand } from "./rpush.js";
import { lastSequence } from "./seal.js";

/**
 * Exhausted blocks (last index taken) a rebuild still looks into: an outcome given back to the
 * queue after a failed spin can belong to a block whose last index another spin already took.
 */
const RECENT_EXHAUSTED_BLOCKS = 16;

export interface Reconciliation {
  /** Outcomes reloaded into a lost list (null when the list was not lost). */
  rebuiltOutcomes: number | null;
  /** Outcomes of sealed blocks that had not been loaded yet (a worker died in between). */
  appendedOutcomes: number;
}

/** Brings the game's Redis list in line with Postgres (see outcome-list.ts); call under the game lock. */
export async function reconcileOutcomeList(
  db: Database,
  redis: RedisClient,
  keys: RedisKeys,
  game: GameOwner,
): Promise<Reconciliation> {
  const marker = await loadedThrough(redis, keys, game);
  const last = await lastSequence(db, game.id);
  if (marker === null) {
    if (last === 0) return { rebuiltOutcomes: null, appendedOutcomes: 0 };
    const items = await unservedItems(db, game.id, 0, keys.outcomeQueue(game));
    await replaceOutcomes(redis, keys, game, items.commands, last);
    return { rebuiltOutcomes: items.count, appendedOutcomes: 0 };
  }
  if (marker >= last) return { rebuiltOutcomes: null, appendedOutcomes: 0 };
  const items = await unservedItems(db, game.id, marker, keys.outcomeQueue(game));
  await appendOutcomes(redis, keys, game, items.commands, last);
  return { rebuiltOutcomes: null, appendedOutcomes: items.count };
}

/**
 * Every outcome of the game's blocks after `afterSequence` that no spin has used, in block then
 * index order, as RPUSH commands of the game's list (one per block). Exhausted blocks are skipped except the most
 * recent few, and closed ones always: their unused outcomes are retired (reveal.ts).
 */
export async function unservedItems(
  db: Database,
  gameId: number,
  afterSequence: number,
  list: string,
): Promise<{ commands: RpushCommand[]; count: number }> {
  // bigint ids come back from postgres.js as strings.
  const candidates = await db.execute<{ id: string; entries: Buffer }>(sql`
    select id, entries from ${blocks}
    where game_id = ${gameId} and sequence > ${afterSequence} and closed_at is null
      and (status <> 'exhausted' or id in (
        select id from ${blocks} where game_id = ${gameId} and status = 'exhausted'
        order by sequence desc limit ${RECENT_EXHAUSTED_BLOCKS}))
    order by sequence`);
  if (candidates.length === 0) return { commands: [], count: 0 };
  const ids = candidates.map((block) => block.id);
  const served = await db.execute<{ block_id: string; outcome_index: number }>(sql`
    select block_id, outcome_index from ${spinOutcomes}
    where block_id in (${sql.join(
      ids.map((id) => sql`${id}`),
      sql`, `,
    )})`);
  const used = new Map<string, Set<number>>();
  for (const spin of served) {
    const indexes = used.get(spin.block_id) ?? new Set<number>();
    indexes.add(spin.outcome_index);
    used.set(spin.block_id, indexes);
  }
  const commands = candidates.map((block) => {
    const skipped = used.get(block.id);
    return blockRpush(block.entries, Number(block.id), list, { skip: skipped && ((index) => skipped.has(index)) });
  });
  return { commands, count: commands.reduce((sum, command) => sum + command.count, 0) };
}
