import type { Environment, Outcome, OutcomePosition, Presentation } from "@outcomes/core";
import { BALANCE_MOVE, CHARGED_MICROS, PLAYER_FIGURES_UPDATE, PLAYER_RETURNING } from "./player-figures.js";
import { SESSION_COLUMNS, SESSION_OF_SPIN, SESSION_VALUES, spinAnswers } from "./player-sessions.js";
import { CHECKED_PLAYER_UPSERT } from "./protection-checks.js";
import { type RecordedSpin, recordedSpinOf } from "./recorded-spin.js";

export { type RecordedSpin, recordedSpinOf, type SpinSession } from "./recorded-spin.js";

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
  /** The free-round grant whose round this spin uses (CONTRACT §14): the player pays no wager. */
  freeRoundsId: string | null;
}

/** Why a free-round spin was left out of its batch, untouched (409 KS-4218 says which). */
export type FreeRoundRefusal = "not_in_grant" | "cancelled" | "expired" | "no_round_left";

/** A spin its batch left out, untouched: its outcome's block is closed, or its free round is not available. */
export interface LeftOutSpin {
  leftOut: "closed_block" | FreeRoundRefusal;
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
 * - A free-round spin (CONTRACT §14) moves its player's balance by the payout only and counts no
 *   wager in `total_wagered_micros`; the spin row keeps the grant's wager, as answered. Its player's
 *   row of the grant is locked (before the players, in key order, as in every statement that takes
 *   both) and read afresh; a spin with no round left there, a grant cancelled or expired by the
 *   clock now, or a player not in the grant is left out untouched, with its reason. The rounds used
 *   and the `free_round_spins` row are written with the spin. A batch without free-round spins runs
 *   a statement that reads no free-round table (`RECORD_PAID_BATCH`): the paid path costs nothing more.
 * - The blocks are looked up as `id = any(array(…))`, not `id in (select …)`: the generic plan of the
 *   latter read `blocks` whole until it held tens of thousands of rows (2 ms a batch at 20,000;
 *   spin-statement-plans.test.ts holds the plan to the key's index).
 */
const GIVEN = `
  given as (
    select * from json_to_recordset($1::json) as x(n int, id text, partner_id text, environment text,
      external_id text, game_id int, block_id bigint, outcome_index int, forced boolean, prize_tier text,
      multiplier_millionths bigint, wager_micros bigint, payout_micros bigint, presentation jsonb,
      free_rounds_id text)
  ),
  open_block as (
    select id from blocks where id = any(array(select block_id from given)) and closed_at is null
    order by id for key share
  )`;

/** A batch of paid spins: each player pays its whole wager. */
const PAID_INPUT = `
  input as (
    select *, ${CHARGED_MICROS} as charged_micros from given
    where block_id is null or block_id in (select id from open_block)
  )`;

/**
 * A batch with free-round spins: their rows of their grants read under lock, and why a spin is left
 * out. The grant's row is share-locked too: a cancel (which locks it to write `cancelled_at`) waits
 * for the batches using its rounds, and a batch that waited for the cancel re-reads the grant and
 * sees it cancelled, so no round is used after a cancel has answered.
 */
const FREE_ROUND_INPUT = `
  free_row as (
    select f.grant_id, f.external_player_id, f.rounds - f.rounds_used as rounds_left,
      g.cancelled_at is not null as cancelled, g.expires_at <= clock_timestamp() as expired
    from free_round_players f join free_round_grants g on g.id = f.grant_id
    where (f.grant_id, f.external_player_id) in
      (select free_rounds_id, external_id from given where free_rounds_id is not null)
    order by f.grant_id, f.external_player_id for update of f for share of g
  ),
  placeable as (
    select g.*, (g.block_id is null or g.block_id in (select id from open_block)) as block_open,
      ${CHARGED_MICROS} as charged_micros
    from given g
  ),
  ranked as (
    select p.*, row_number() over (partition by p.block_open, p.free_rounds_id, p.external_id order by p.n) as round_n
    from placeable p
  ),
  judged as (
    select r.*, f.rounds_left - r.round_n as rounds_left_after,
      case
        when not r.block_open then 'closed_block'
        when r.free_rounds_id is null then null
        when f.grant_id is null then 'not_in_grant'
        when f.cancelled then 'cancelled'
        when f.expired then 'expired'
        when r.round_n > f.rounds_left then 'no_round_left'
      end as left_out
    from ranked r left join free_row f on f.grant_id = r.free_rounds_id and f.external_player_id = r.external_id
  ),
  input as (
    select * from judged where left_out is null
  )`;

/**
 * Per player of the batch: the move of his balance, his spins, the wagers charged and the payouts;
 * for the checks, the largest stake too.
 */
const totals = (checked: boolean) => `
  totals as (
    select partner_id, environment, external_id, sum${BALANCE_MOVE}::bigint as delta,
      count(*)::int as spin_count, sum(charged_micros)::bigint as wagered, sum(payout_micros)::bigint as paid
      ${checked ? ", max(wager_micros) as top_wager" : ""}
    from input group by partner_id, environment, external_id
  )`;

/** The players' rows: each spin's figures added, under the row's lock. */
const PLAYER_UPSERT = `
  player as (
    insert into players (partner_id, environment, external_id, balance_micros, total_spins,
      total_wagered_micros, total_paid_micros, updated_at, ${SESSION_COLUMNS})
    select partner_id, environment, external_id, delta, spin_count, wagered, paid,
      clock_timestamp() + (spin_count - 1) * interval '1 millisecond', ${SESSION_VALUES}
    from totals
    order by partner_id, environment, external_id
    on conflict (partner_id, environment, external_id) do update set
      ${PLAYER_FIGURES_UPDATE}
    returning ${PLAYER_RETURNING}
  )`;

/** Each spin's place in its player's chain (balance after, time), and the outcomes used. */
const PLACED_AND_USED = `
  placed as (
    select i.*, p.id as player_id,
      (p.balance_micros - t.delta + sum${BALANCE_MOVE} over w)::bigint as balance_after,
      p.updated_at - (t.spin_count - row_number() over w) * interval '1 millisecond' as spun_at,
      ${SESSION_OF_SPIN(BALANCE_MOVE)}
    from input i
    join totals t on t.partner_id = i.partner_id and t.environment = i.environment and t.external_id = i.external_id
    join player p on p.partner_id = i.partner_id and p.environment = i.environment and p.external_id = i.external_id
    window w as (partition by i.partner_id, i.environment, i.external_id order by i.n)
  ),
  used as (
    insert into spin_outcomes (block_id, outcome_index, spin_id, created_at)
    select block_id, outcome_index, id, spun_at from placed where block_id is not null
    order by block_id, outcome_index
  )`;

/** The players' figures and the outcomes used: with the protection checks, or without (the plain path). */
const playersAndOutcomes = (checked: boolean) =>
  `${totals(checked)}, ${checked ? CHECKED_PLAYER_UPSERT : PLAYER_UPSERT}, ${PLACED_AND_USED}`;

/** The rounds used and each free-round spin's row. */
const FREE_ROUNDS_USED = `
  free_used as (
    update free_round_players f set rounds_used = f.rounds_used + u.spins, paid_micros = f.paid_micros + u.paid
    from (select free_rounds_id, external_id, count(*)::int as spins, sum(payout_micros) as paid
      from input where free_rounds_id is not null group by free_rounds_id, external_id) u
    where f.grant_id = u.free_rounds_id and f.external_player_id = u.external_id
  ),
  free_spun as (
    insert into free_round_spins (spin_id, grant_id, partner_id, environment, game_id, external_player_id,
      wager_micros, payout_micros, rounds_left, created_at)
    select id, free_rounds_id, partner_id, environment, game_id, external_id, wager_micros, payout_micros,
      rounds_left_after, spun_at
    from placed where free_rounds_id is not null
    returning spin_id, rounds_left
  )`;

const INSERT_SPINS = `
  insert into spins (id, partner_id, environment, game_id, player_id, block_id, outcome_index, forced, prize_tier,
    multiplier_millionths, wager_micros, payout_micros, balance_after_micros, presentation, created_at)
  select id, partner_id, environment, game_id, player_id, block_id, outcome_index, forced, prize_tier,
    multiplier_millionths, wager_micros, payout_micros, balance_after, presentation, spun_at
  from placed order by n
  returning id, player_id, balance_after_micros, created_at`;

/** The spins inserted, each answered with its session. */
const insertSpins = (checked: boolean) => `recorded as (${INSERT_SPINS}) ${spinAnswers(checked)}`;

/** Paid spins only (nearly every batch): no free-round table is read. A spin not returned was left out (its block closed). */
const recordPaidBatch = (checked: boolean) =>
  `with ${GIVEN}, ${PAID_INPUT}, ${playersAndOutcomes(checked)}, ${insertSpins(checked)}`;

/** With free-round spins: the spins recorded, each free-round spin's rounds left, and each spin left out with why. */
const recordBatchWithFreeRounds = (checked: boolean) => `
  with ${GIVEN}, ${FREE_ROUND_INPUT}, ${playersAndOutcomes(checked)}, ${FREE_ROUNDS_USED},
  recorded as (${INSERT_SPINS}),
  answered as (${spinAnswers(checked)})
  select *, null::int as rounds_left, null::text as left_out from answered
  union all select spin_id, null, null, null, null, null, null, null, rounds_left, null from free_spun
  union all select id, null, null, null, null, null, null, null, null, left_out from judged where left_out is not null`;

/** The four statements, by [free rounds in the batch][checked]: each prepared once per connection. */
const STATEMENTS = [false, true].map((free) =>
  [false, true].map((checked) => (free ? recordBatchWithFreeRounds(checked) : recordPaidBatch(checked))),
);

/**
 * The batch's spins as recorded, in the order given, or why one was left out. Atomic on its own
 * (one statement). `checked`: a spin's player protection is judged (protection-checks.ts), for
 * batches with a spin of a partner whose spins are checked; else the statement reads no protection table.
 */
export async function recordSpins(
  client: SqlClient,
  batch: readonly NewSpin[],
  checked = false,
): Promise<(RecordedSpin | LeftOutSpin)[]> {
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
    free_rounds_id: spin.freeRoundsId,
  }));
  const parameters = [JSON.stringify(input)];
  const free = batch.some((spin) => spin.freeRoundsId !== null);
  const statement = STATEMENTS[Number(free)]![Number(checked)]!;
  // Sent now (`execute`): a transaction pipelines it after the statements called before it.
  const rows = await client.unsafe<BatchRow[]>(statement, parameters, { prepare: true }).execute();
  const recorded = new Map<string, BatchRow>();
  const roundsLeft = new Map<string, number>();
  const leftOut = new Map<string, LeftOutSpin["leftOut"]>();
  for (const row of rows) {
    if (row.left_out) leftOut.set(row.id, row.left_out);
    else if (row.player_id === null) roundsLeft.set(row.id, row.rounds_left!);
    else recorded.set(row.id, row);
  }
  return batch.map((spin) => {
    const row = recorded.get(spin.id);
    if (row) return recordedSpinOf({ ...row, rounds_left: roundsLeft.get(spin.id) ?? null });
    // Only a block's outcome can be left out of a paid batch, and only because the block is closed.
    const reason = leftOut.get(spin.id) ?? (spin.position === null ? undefined : "closed_block");
    if (reason === undefined) throw new Error(`spin ${spin.id} was neither recorded nor left out by its batch`);
    return { leftOut: reason };
  });
}

/** The statement's rows: a recorded spin, a free-round spin's rounds left, or a spin left out (the last two with free rounds only). */
type BatchRow = {
  id: string;
  player_id: string | null;
  balance_after_micros: string;
  created_at: string | Date;
  rounds_left?: number | null;
  left_out?: LeftOutSpin["leftOut"] | null;
  session_started_at?: string | Date | null;
  session_spins?: number | null;
  session_net?: string | null;
  reminder_due?: boolean | null;
};

export const isLeftOut = (answer: RecordedSpin | LeftOutSpin): answer is LeftOutSpin => "leftOut" in answer;
