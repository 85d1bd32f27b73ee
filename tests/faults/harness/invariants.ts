import { parseQueueItem } from "@outcomes/core";
import { type RedisClient, redisKeys } from "@outcomes/queue";
import type { Sql } from "postgres";

export interface LedgerReport {
  spinsInPostgres: number;
  acceptedByClients: number;
  missing: string[];
  /** Spins in Postgres no client saw succeed: a commit whose answer was lost (kill, reset). */
  unacknowledged: number;
  mismatched: string[];
  duplicateOutcomes: number;
  playersChecked: number;
  balanceMismatches: string[];
}

/**
 * The money and spin invariants, read from Postgres: every spin a client saw as 200 is there with
 * the same player and wager; no outcome is used twice; each player's balance and totals are exactly
 * the sums of its spins; the ledger's totals agree.
 */
export async function checkLedger(
  sql: Sql,
  partnerId: string,
  accepted: Map<string, { playerId: string; wagerMicros: number }>,
): Promise<LedgerReport> {
  const rows = await sql<{ id: string; player: string; wager: string }[]>`
    select s.id, p.external_id as player, s.wager_micros::text as wager
    from spins s join players p on p.id = s.player_id where s.partner_id = ${partnerId}`;
  const stored = new Map(rows.map((row) => [row.id, row]));
  const missing = [...accepted.keys()].filter((id) => !stored.has(id));
  const mismatched = [...accepted].flatMap(([id, asked]) => {
    const row = stored.get(id);
    return row && (row.player !== asked.playerId || Number(row.wager) !== asked.wagerMicros) ? [id] : [];
  });
  const [duplicated] = await sql<{ duplicates: number }[]>`
    select count(*)::int as duplicates from (
      select 1 from spins where not forced group by block_id, outcome_index having count(*) > 1) d`;
  const players = await sql<{ player: string; ok: boolean }[]>`
    select p.external_id as player,
      p.balance_micros = coalesce(sum(s.payout_micros - s.wager_micros), 0)
      and p.total_spins = count(s.id)
      and p.total_wagered_micros = coalesce(sum(s.wager_micros), 0)
      and p.total_paid_micros = coalesce(sum(s.payout_micros), 0)
      and p.balance_micros = coalesce((array_agg(s.balance_after_micros order by s.created_at desc, s.id desc))[1], 0)
      as ok
    from players p left join spins s on s.player_id = p.id
    where p.partner_id = ${partnerId} group by p.id`;
  const [totals] = await sql<{ ok: boolean }[]>`
    select (select coalesce(sum(balance_micros), 0) from players where partner_id = ${partnerId})
         = (select coalesce(sum(payout_micros - wager_micros), 0) from spins where partner_id = ${partnerId}) as ok`;
  const balanceMismatches = players.filter((row) => !row.ok).map((row) => row.player);
  if (!totals?.ok) balanceMismatches.push("(partner totals)");
  return {
    spinsInPostgres: rows.length,
    acceptedByClients: accepted.size,
    missing,
    unacknowledged: rows.filter((row) => !accepted.has(row.id)).length,
    mismatched,
    duplicateOutcomes: duplicated?.duplicates ?? 0,
    playersChecked: players.length,
    balanceMismatches,
  };
}

export interface OutcomeReport {
  blocks: number;
  sequences: number[];
  loadedThrough: number | null;
  sealedOutcomes: number;
  spent: number;
  queued: number;
  /** Items twice in the list. */
  duplicateQueued: number;
  /** Items naming no sealed outcome of this game. */
  foreignQueued: number;
  /** Items in the list already used by a spin (the spin path drops them when popped). */
  queuedButSpent: number;
  /** Outcomes of loaded blocks that are neither queued nor spent: popped by a process that died. */
  stranded: number;
}

/**
 * Outcome accounting for one game (docs/game-math.md): every sealed block has a unique sequence;
 * the Redis list holds each outcome at most once, only outcomes of this game's sealed blocks; and
 * queue ∪ spins covers every outcome of the loaded blocks except those taken by a process that died.
 */
export async function checkOutcomes(
  sql: Sql,
  redis: RedisClient,
  redisPrefix: string,
  gameId: number,
): Promise<OutcomeReport> {
  const blocks = await sql<{ id: string; sequence: number; size: number }[]>`
    select id::text, sequence, size from blocks where game_id = ${gameId} order by sequence`;
  const spent = new Set(
    (
      await sql<{ key: string }[]>`
      select block_id || ':' || outcome_index as key from spins where game_id = ${gameId} and not forced`
    ).map((row) => row.key),
  );
  const [owner] = await sql<{ partnerId: string; environment: string }[]>`
    select partner_id as "partnerId", environment from games where id = ${gameId}`;
  if (!owner) throw new Error(`game ${gameId} does not exist`);
  const keys = redisKeys(redisPrefix);
  const game = { id: gameId, ...owner };
  const items = await redis.lrange(keys.outcomeQueue(game), 0, -1);
  const marker = await redis.get(keys.outcomesLoadedThrough(game));
  const loadedThrough = marker === null ? null : Number(marker);
  const sizes = new Map(blocks.map((block) => [block.id, block.size]));
  const queued = new Set<string>();
  let duplicateQueued = 0;
  let foreignQueued = 0;
  let queuedButSpent = 0;
  for (const item of items) {
    const outcome = parseQueueItem(item);
    const key = `${outcome.blockId}:${outcome.index}`;
    const size = sizes.get(String(outcome.blockId));
    if (size === undefined || outcome.index < 0 || outcome.index >= size) foreignQueued++;
    if (queued.has(key)) duplicateQueued++;
    if (spent.has(key)) queuedButSpent++;
    queued.add(key);
  }
  let stranded = 0;
  for (const block of blocks) {
    if (loadedThrough === null || block.sequence > loadedThrough) continue;
    for (let index = 0; index < block.size; index++) {
      const key = `${block.id}:${index}`;
      if (!spent.has(key) && !queued.has(key)) stranded++;
    }
  }
  return {
    blocks: blocks.length,
    sequences: blocks.map((block) => block.sequence),
    loadedThrough,
    sealedOutcomes: blocks.reduce((sum, block) => sum + block.size, 0),
    spent: spent.size,
    queued: items.length,
    duplicateQueued,
    foreignQueued,
    queuedButSpent,
    stranded,
  };
}

/** Sequences 1..n with no gap and no repeat. */
export function contiguous(sequences: number[]): boolean {
  return sequences.every((sequence, position) => sequence === position + 1);
}

export interface KeyedSpinsReport {
  spins: number;
  keys: number;
  /** Spins no idempotency record answers with: a keyed request that spun without its record. */
  spinsWithoutKey: number;
  /** Spins two or more keys answer with. */
  spinsOfSeveralKeys: number;
}

/**
 * When every client sends `Idempotency-Key`: each spin of the partner is the stored answer of
 * exactly one key, so no key spun twice and no spin escaped its key.
 */
export async function checkKeyedSpins(sql: Sql, partnerId: string): Promise<KeyedSpinsReport> {
  const [report] = await sql<KeyedSpinsReport[]>`
    with answered as (
      select response_body->>'spinId' as spin_id, count(*)::int as keys
      from idempotency_keys where partner_id = ${partnerId} and response_status = 200 group by 1)
    select
      (select count(*)::int from spins where partner_id = ${partnerId}) as spins,
      (select count(*)::int from idempotency_keys where partner_id = ${partnerId}) as keys,
      (select count(*)::int from spins s where s.partner_id = ${partnerId}
        and not exists (select 1 from answered a where a.spin_id = s.id::text)) as "spinsWithoutKey",
      (select count(*)::int from answered where keys > 1) as "spinsOfSeveralKeys"`;
  return report!;
}
