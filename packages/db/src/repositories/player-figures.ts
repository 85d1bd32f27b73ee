import { SESSION_UPDATES } from "./player-sessions.js";

/**
 * How a spin moves its player's figures, written once for the statements that apply it (the spin
 * batch, record-spins.ts) and take it back (a void, spin-voids.ts). SQL text over a row with
 * `wager_micros`, `payout_micros` and `free_rounds_id` (the grant whose round the spin used, or null).
 *
 * A spin adds one to `total_spins`, its charged wager to `total_wagered_micros`, its payout to
 * `total_paid_micros`, and `payout − charged` to `balance_micros`; a void subtracts the same.
 */

/** What the player paid for the spin: its wager, or nothing on a free round (the partner paid it; CONTRACT §14). */
export const CHARGED_MICROS = "(case when free_rounds_id is null then wager_micros else 0 end)";

/** The spin's move of its player's balance, over a row that also has `charged_micros` (`CHARGED_MICROS`). */
export const BALANCE_MOVE = "(payout_micros - charged_micros)";

/** A player row's figures after the batch's spins of his (`excluded`). */
export const PLAYER_FIGURES_UPDATE = `balance_micros = players.balance_micros + excluded.balance_micros,
      total_spins = players.total_spins + excluded.total_spins,
      total_wagered_micros = players.total_wagered_micros + excluded.total_wagered_micros,
      total_paid_micros = players.total_paid_micros + excluded.total_paid_micros,
      updated_at = greatest(clock_timestamp(), players.updated_at + interval '1 millisecond')
        + (excluded.total_spins - 1) * interval '1 millisecond',
      ${SESSION_UPDATES}`;

/** What the players upsert returns for the spins' places in their chains and sessions. */
export const PLAYER_RETURNING = `id, partner_id, environment, external_id, balance_micros, updated_at,
      session_started_at, session_spins, session_net_micros`;
