/**
 * The player-protection checks of the spin statement (CONTRACT §16), as SQL text for record-spins.ts.
 * They run under the player row's lock, in the players upsert's `do update`, where the balance bound
 * is checked too: the row read there is the latest committed one, so two batches of one player (on
 * one API process or two) are judged one after the other. A refused spin fails the statement through
 * `refuse_spin(verdict)` (migration 0024): nothing of it is written, and the group commit splits its
 * batch until the refused spin is alone, as for a balance bound (`protectionVerdict` reads the verdict).
 */
import { PROTECTION_SETTINGS } from "../schema/player-protections.js";
import { PLAYER_FIGURES_UPDATE, PLAYER_RETURNING } from "./player-figures.js";
import { SESSION_COLUMNS } from "./player-sessions.js";

const NOW = "clock_timestamp()";
const UTC = `(${NOW} at time zone 'UTC')`;

/** The first day of each period a limit counts in: the UTC day, the ISO week (from Monday), the month. */
export const PERIODS = [
  { period: "daily", prefix: "day", start: `${UTC}::date` },
  { period: "weekly", prefix: "week", start: `date_trunc('week', ${UTC})::date` },
  { period: "monthly", prefix: "month", start: `date_trunc('month', ${UTC})::date` },
] as const;

/** A setting in force now: its waiting change once that change's time has come. */
const inForce = (column: string) =>
  `case when pp.${column}_next_at <= ${NOW} then pp.${column}_next else pp.${column} end as ${column}`;

const PLAYER_KEY = "partner_id = t.partner_id and environment = t.environment and external_id = t.external_id";

/**
 * The row of `table` with that unique key, looked up by its index for each player of the batch. As a
 * plain join, the generic plan of this prepared statement (which expects 50 players a batch) reads
 * a small table whole and hashes it: 2,000 players cost 0.8 ms a batch in the bench, and more as
 * they grow. `limit 1` (the key is unique: no row is left out) keeps the lookup a nested loop.
 */
const byKey = (table: string, key: string) => `select * from ${table} where ${key} limit 1`;

/**
 * Per player of the batch: his profile's figures, his settings in force, and what the batch asks of
 * him (its spins, their charged wagers, the largest stake). A missing profile or protection is no rule.
 */
export const RULES = `
  rules as (
    select t.partner_id, t.environment, t.external_id, t.spin_count, t.wagered as charged, t.top_wager,
      j.code as jurisdiction, coalesce(j.min_round_ms, 0) as min_round_ms, j.max_wager_micros,
      j.session_reminder_minutes, known.id as known_id, known.updated_at as last_spun_at,
      ${Object.values(PROTECTION_SETTINGS).map(inForce).join(",\n      ")}
    from totals t
    cross join lateral (${byKey("partners", "id = t.partner_id")}) pa
    left join lateral (${byKey("player_protections", PLAYER_KEY)}) pp on true
    left join jurisdictions j on j.code = coalesce(pp.jurisdiction, pa.default_jurisdiction)
    left join lateral (${byKey("players", PLAYER_KEY)}) known on true
  )`;

const refuse = (...facts: string[]) => `refuse_spin(jsonb_build_object(${facts.join(", ")}))`;

/** A period figure of the player row `p` (or 0 when it counts another period). */
const used = (p: string, prefix: string, start: string, kind: "wagered" | "lost") =>
  `(case when ${p}.${prefix}_start = ${start} then ${p}.${prefix}_${kind}_micros else 0 end)`;

function limitChecks(p: string): string[] {
  return PERIODS.flatMap(({ period, prefix, start }) =>
    (["loss", "wager"] as const).map((limit) => {
      const column = `r.${limit}_${period}_micros`;
      // The worst case: every charged wager of the batch lost, so the loss grows by as much as the wagers.
      const figure = used(p, prefix, start, limit === "loss" ? "lost" : "wagered");
      return `when ${column} is not null and ${figure} + r.charged > ${column} then ${refuse(
        "'check', 'limit'",
        `'limit', '${limit}'`,
        `'period', '${period}'`,
        `'remainingMicros', greatest(0, ${column} - ${figure})`,
      )}`;
    }),
  );
}

/**
 * 0, or the statement fails with the first refusal, in the contract's order: restricted, stake,
 * pace, limits. `p` names the player's figures: the row as locked (`players`), or `z`
 * (`ZERO_FIGURES`) for a player the batch creates. More than one spin of a player in one batch is
 * too soon for any pace: the batch is split, and they are judged one by one.
 */
export function verdict(p: "players" | "z"): string {
  const last = p === "z" ? "null::timestamptz" : `${p}.updated_at`;
  const minRound = "r.min_round_ms * interval '1 millisecond'";
  const checks = [
    `when r.self_excluded_until > ${NOW} then ${refuse("'check', 'restricted'", "'restriction', 'self_exclusion'", "'until', r.self_excluded_until")}`,
    `when r.cooling_off_until > ${NOW} then ${refuse("'check', 'restricted'", "'restriction', 'cooling_off'", "'until', r.cooling_off_until")}`,
    `when r.max_wager_micros is not null and r.top_wager > r.max_wager_micros then ${refuse(
      "'check', 'stake'",
      "'jurisdiction', r.jurisdiction",
      "'maxWagerMicros', r.max_wager_micros",
    )}`,
    `when r.min_round_ms > 0 and (r.spin_count > 1 or ${last} > ${NOW} - ${minRound}) then ${refuse(
      "'check', 'pace'",
      `'retryAfterMs', greatest(1, ceil(extract(epoch from coalesce(${last} + ${minRound} - ${NOW}, ${minRound})) * 1000))`,
    )}`,
    ...limitChecks(p),
  ];
  return `(case ${checks.join("\n      ")} else 0 end)`;
}

/** The figures of a player with no row yet (`z`): no period counted. */
export const ZERO_FIGURES = `(select ${PERIODS.map(
  ({ prefix }) => `null::date as ${prefix}_start, 0 as ${prefix}_wagered_micros, 0 as ${prefix}_lost_micros`,
).join(", ")})`;

/** The period figures a batch sets on an existing player row: a new period starts from the batch's own. */
export const PERIOD_UPDATES = PERIODS.flatMap(({ prefix }) => [
  `${prefix}_start = excluded.${prefix}_start`,
  ...(["wagered", "lost"] as const).map(
    (kind) =>
      `${prefix}_${kind}_micros = excluded.${prefix}_${kind}_micros + case when players.${prefix}_start = excluded.${prefix}_start then players.${prefix}_${kind}_micros else 0 end`,
  ),
]).join(",\n      ");

/** The period columns of the players insert, and their values from a `totals` row `t`. */
export const PERIOD_COLUMNS = PERIODS.map(
  ({ prefix }) => `${prefix}_start, ${prefix}_wagered_micros, ${prefix}_lost_micros`,
).join(", ");
export const PERIOD_VALUES = PERIODS.map(({ start }) => `${start}, t.wagered, t.wagered - t.paid`).join(", ");

/** The players' rows of a checked batch: each player's protection judged first, his period figures kept. */
export const CHECKED_PLAYER_UPSERT = `
  ${RULES},
  player as (
    insert into players (partner_id, environment, external_id, balance_micros, total_spins,
      total_wagered_micros, total_paid_micros, updated_at, ${PERIOD_COLUMNS}, ${SESSION_COLUMNS})
    select t.partner_id, t.environment, t.external_id,
      t.delta + case when r.known_id is null then ${verdict("z")} else 0 end, t.spin_count, t.wagered, t.paid,
      clock_timestamp() + (t.spin_count - 1) * interval '1 millisecond', ${PERIOD_VALUES},
      clock_timestamp(), t.spin_count, t.delta
    from totals t
    join rules r on r.partner_id = t.partner_id and r.environment = t.environment and r.external_id = t.external_id
    cross join ${ZERO_FIGURES} z
    order by t.partner_id, t.environment, t.external_id
    on conflict (partner_id, environment, external_id) do update set
      ${PLAYER_FIGURES_UPDATE.replace(
        "players.balance_micros + excluded.balance_micros",
        `players.balance_micros + excluded.balance_micros + (select ${verdict("players")} from rules r
          where r.partner_id = excluded.partner_id and r.environment = excluded.environment
            and r.external_id = excluded.external_id)`,
      )},
      ${PERIOD_UPDATES}
    returning ${PLAYER_RETURNING}
  )`;

/**
 * A void gives a limit its room back (CONTRACT §16): its spin's charged wager and net loss leave the
 * period figures that counted them, those of the periods `spunAt` (SQL) falls in, over a row with
 * `charged_micros` and `payout_micros`.
 */
export function periodVoidUpdates(spunAt: string): string {
  const utc = `(${spunAt} at time zone 'UTC')`;
  const starts = {
    day: `${utc}::date`,
    week: `date_trunc('week', ${utc})::date`,
    month: `date_trunc('month', ${utc})::date`,
  };
  return PERIODS.flatMap(({ prefix }) => {
    const same = `${prefix}_start = ${starts[prefix]}`;
    return [
      `${prefix}_wagered_micros = ${prefix}_wagered_micros - case when ${same} then charged_micros else 0 end`,
      `${prefix}_lost_micros = ${prefix}_lost_micros - case when ${same} then charged_micros - payout_micros else 0 end`,
    ];
  }).join(",\n          ");
}
