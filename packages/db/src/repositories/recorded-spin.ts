/** A spin as its statement recorded it, and how its returned row reads. */
export interface RecordedSpin {
  playerId: number;
  balanceAfterMicros: number;
  createdAt: Date;
  /** A free-round spin's player's rounds of its grant left after it; null for any other spin. */
  roundsLeft: number | null;
  /** The player's session as it stood after the spin (player-sessions.ts); null when read back later. */
  session: SpinSession | null;
}

export interface SpinSession {
  startedAt: Date;
  spins: number;
  /** The session's payouts minus its charged wagers. */
  netMicros: number;
  reminderDue: boolean;
}

/** A spin row's returned columns as the spin path uses them. */
export function recordedSpinOf(row: {
  player_id: string | null;
  balance_after_micros: string;
  created_at: string | Date;
  rounds_left: number | null;
  session_started_at?: string | Date | null;
  session_spins?: number | null;
  session_net?: string | null;
  reminder_due?: boolean | null;
}): RecordedSpin {
  return {
    playerId: Number(row.player_id),
    balanceAfterMicros: Number(row.balance_after_micros),
    createdAt: new Date(row.created_at),
    roundsLeft: row.rounds_left,
    session:
      row.session_started_at == null
        ? null
        : {
            startedAt: new Date(row.session_started_at),
            spins: row.session_spins ?? 0,
            netMicros: Number(row.session_net),
            reminderDue: row.reminder_due === true,
          },
  };
}
