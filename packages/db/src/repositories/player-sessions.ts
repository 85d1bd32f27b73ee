/**
 * The player's session (CONTRACT §16, UKGC RTS 2E/13C): his spins with gaps under 30 minutes, kept on
 * his row by the spin statement (SQL text for record-spins.ts): when it started, its spins, and its
 * payouts minus its charged wagers. Every spin's answer shows them as they stood after it.
 */

/** The latest spin (`updated_at`) is 30 minutes old or more: the batch starts a new session. */
const NEW_SESSION = `(players.session_started_at is null
  or players.updated_at <= clock_timestamp() - interval '30 minutes')`;

/** The session columns of the players insert, and their values over a `totals` row. */
export const SESSION_COLUMNS = "session_started_at, session_spins, session_net_micros";
export const SESSION_VALUES = "clock_timestamp(), spin_count, delta";

export const SESSION_UPDATES = `session_started_at = case when ${NEW_SESSION} then clock_timestamp()
        else players.session_started_at end,
      session_spins = excluded.session_spins + case when ${NEW_SESSION} then 0 else players.session_spins end,
      session_net_micros = excluded.session_net_micros
        + case when ${NEW_SESSION} then 0 else players.session_net_micros end`;

/** Each spin's session figures in `placed`, over the player row `p`, the batch totals `t` and window `w`. */
export const SESSION_OF_SPIN = (balanceMove: string) => `p.session_started_at,
      p.session_spins - (t.spin_count - row_number() over w)::int as session_spins,
      (p.session_net_micros - t.delta + sum${balanceMove} over w)::bigint as session_net,
      row_number() over w as k`;

/**
 * Whether a reminder is due on the spin: the first past each `sessionReminderMinutes` mark of its
 * session (a checked batch, with `rules` r; the previous spin is 1 ms earlier in the batch, or the
 * player's latest before it). A batch that is not checked has no profile with a reminder.
 */
const PREVIOUS_SPIN = "(case when pl.k = 1 then r.last_spun_at else pl.spun_at - interval '1 millisecond' end)";
const MARKS_PASSED = (at: string) =>
  `floor(greatest(0, extract(epoch from (${at} - pl.session_started_at))) / (r.session_reminder_minutes * 60))`;
const REMINDER_DUE = `coalesce(r.session_reminder_minutes is not null
      and ${MARKS_PASSED("pl.spun_at")} > ${MARKS_PASSED(PREVIOUS_SPIN)}, false)`;

/** The statement's answer per recorded spin: its row's columns and its session. */
export const spinAnswers = (checked: boolean) => `
  select s.id, s.player_id, s.balance_after_micros, s.created_at, pl.session_started_at, pl.session_spins,
    pl.session_net, ${checked ? REMINDER_DUE : "false"} as reminder_due
  from recorded s join placed pl on pl.id = s.id
  ${
    checked
      ? "join rules r on r.partner_id = pl.partner_id and r.environment = pl.environment and r.external_id = pl.external_id"
      : ""
  }`;
