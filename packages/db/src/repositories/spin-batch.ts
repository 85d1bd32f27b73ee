import type { Environment, Outcome, OutcomePosition, Presentation } from "@outcomes/core";
import type { SqlClient } from "./sql-client.js";

export interface NewSpin {
  id: string;
  partnerId: string;
  environment: Environment;
  gameId: number;
  /** The partner's player id; the player row is created on its first spin. */
  externalPlayerId: string;
  outcome: Outcome;
  /** The block entry the outcome was taken from; null for a forced sandbox spin (drawn, not taken). */
  position: OutcomePosition | null;
  wagerMicros: number;
  payoutMicros: number;
  presentation: Presentation;
}

export interface RecordedSpin {
  playerId: number;
  balanceAfterMicros: number;
  createdAt: Date;
}

/**
 * Records a batch of spins (group commit) in one statement, prepared: one upsert per distinct
 * player applying the sum of its spins' `payout − wager`, then one multi-row insert of the spins.
 *
 * - Players are upserted sorted by (partner, environment, external id), so two batches touching the
 *   same players take their row locks in the same order and cannot deadlock.
 * - Each spin's `balance_after_micros` is the player's balance before the batch plus the running
 *   sum of that player's spins in arrival order (`n`): the chain of balances is exact, as if the
 *   spins had committed one by one in that order.
 * - `created_at` follows commit order per player: the player row's `updated_at` holds the time of
 *   its latest spin, and a batch's spins of that player take the next milliseconds after both it
 *   and the clock (read after the row lock, which a later batch can only take once this one has
 *   committed). The column keeps milliseconds, so a player's spins never share one, and a later
 *   commit is never dated before an earlier one, at a day's end as anywhere. (A player spinning
 *   faster than 1,000 a second would run ahead of the clock by the excess only.)
 * - Each block outcome's row in `spin_outcomes` (unique on block and index across every day of the
 *   partitioned `spins`) fails the whole statement on a reused outcome (see `isDuplicateOutcome`);
 *   the caller then retries the batch's spins apart. Rows go in outcome order, so two batches
 *   racing for outcomes wait for each other rather than deadlock.
 * - A spin whose outcome's block is closed (its unused entries retired, its seed about to be shown)
 *   is left out, untouched, and answered null. The block row's key-share lock (the one its spins'
 *   foreign key takes anyway) is taken first: a close holds the row FOR UPDATE, so a spin that
 *   arrives during it waits and then sees the block closed, and the close waits for the spins
 *   that hold the lock, whose outcomes it then counts as used.
 */
const RECORD_SPIN_BATCH = `
  with given as (
    select * from json_to_recordset($1::json) as x(n int, id text, partner_id text, environment text,
      external_id text, game_id int, block_id bigint, outcome_index int, forced boolean, prize_tier text,
      multiplier_millionths bigint, wager_micros bigint, payout_micros bigint, presentation jsonb)
  ),
  open_block as (
    select id from blocks where id in (select block_id from given) and closed_at is null
    order by id for key share
  ),
  input as (
    select * from given where block_id is null or block_id in (select id from open_block)
  ),
  totals as (
    select partner_id, environment, external_id, sum(payout_micros - wager_micros)::bigint as delta,
      count(*)::int as spin_count, sum(wager_micros)::bigint as wagered, sum(payout_micros)::bigint as paid
    from input group by partner_id, environment, external_id
  ),
  player as (
    insert into players (partner_id, environment, external_id, balance_micros, total_spins,
      total_wagered_micros, total_paid_micros, updated_at)
    select partner_id, environment, external_id, delta, spin_count, wagered, paid,
      clock_timestamp() + (spin_count - 1) * interval '1 millisecond'
    from totals
    order by partner_id, environment, external_id
    on conflict (partner_id, environment, external_id) do update set
      balance_micros = players.balance_micros + excluded.balance_micros,
      total_spins = players.total_spins + excluded.total_spins,
      total_wagered_micros = players.total_wagered_micros + excluded.total_wagered_micros,
      total_paid_micros = players.total_paid_micros + excluded.total_paid_micros,
      updated_at = greatest(clock_timestamp(), players.updated_at + interval '1 millisecond')
        + (excluded.total_spins - 1) * interval '1 millisecond'
    returning id, partner_id, environment, external_id, balance_micros, updated_at
  ),
  placed as (
    select i.*, p.id as player_id,
      (p.balance_micros - t.delta + sum(i.payout_micros - i.wager_micros) over w)::bigint as balance_after,
      p.updated_at - (t.spin_count - row_number() over w) * interval '1 millisecond' as spun_at
    from input i
    join totals t on t.partner_id = i.partner_id and t.environment = i.environment and t.external_id = i.external_id
    join player p on p.partner_id = i.partner_id and p.environment = i.environment and p.external_id = i.external_id
    window w as (partition by i.partner_id, i.environment, i.external_id order by i.n)
  ),
  used as (
    insert into spin_outcomes (block_id, outcome_index, spin_id, created_at)
    select block_id, outcome_index, id, spun_at from placed where block_id is not null
    order by block_id, outcome_index
  )
  insert into spins (id, partner_id, environment, game_id, player_id, block_id, outcome_index, forced, prize_tier,
    multiplier_millionths, wager_micros, payout_micros, balance_after_micros, presentation, created_at)
  select id, partner_id, environment, game_id, player_id, block_id, outcome_index, forced, prize_tier,
    multiplier_millionths, wager_micros, payout_micros, balance_after, presentation, spun_at
  from placed order by n
  returning id, player_id, balance_after_micros, created_at`;

/**
 * The batch's spins as recorded, in the order given; null for a spin left out because its outcome's
 * block is closed. Atomic on its own (one statement).
 */
export async function recordSpinBatch(client: SqlClient, batch: readonly NewSpin[]): Promise<(RecordedSpin | null)[]> {
  const input = batch.map((spin, n) => ({
    n,
    id: spin.id,
    partner_id: spin.partnerId,
    environment: spin.environment,
    external_id: spin.externalPlayerId,
    game_id: spin.gameId,
    block_id: spin.position?.blockId ?? null,
    outcome_index: spin.position?.index ?? null,
    forced: spin.position === null,
    prize_tier: spin.outcome.tier,
    multiplier_millionths: spin.outcome.multiplierMillionths,
    wager_micros: spin.wagerMicros,
    payout_micros: spin.payoutMicros,
    presentation: spin.presentation,
  }));
  const rows = await client.unsafe<
    { id: string; player_id: string; balance_after_micros: string; created_at: string | Date }[]
  >(RECORD_SPIN_BATCH, [JSON.stringify(input)], { prepare: true });
  const byId = new Map(rows.map((row) => [row.id, row]));
  return batch.map((spin) => {
    const row = byId.get(spin.id);
    if (row) return recordedSpinOf(row);
    if (spin.position === null) throw new Error(`forced spin ${spin.id} was not recorded by its batch`);
    return null;
  });
}

/** A spin row's returned columns as the spin path uses them. */
export function recordedSpinOf(row: {
  player_id: string;
  balance_after_micros: string;
  created_at: string | Date;
}): RecordedSpin {
  return {
    playerId: Number(row.player_id),
    balanceAfterMicros: Number(row.balance_after_micros),
    createdAt: new Date(row.created_at),
  };
}
