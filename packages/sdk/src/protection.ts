import { PARTNER_PREFIX, type PartnerRequests, segment } from "./requests.js";

/** A jurisdiction profile (`GET /jurisdictions`; docs/jurisdictions.md says where each built-in's figures come from). */
export interface Jurisdiction {
  code: string;
  name: string;
  /** The least time between the starts of one player's rounds (429 KS-4293 sooner). */
  minRoundMs: number;
  /** The most one spin may stake (400 KS-4220 above); null: no limit. */
  maxWagerUsd: number | null;
  sessionReminderMinutes: number | null;
  builtIn: boolean;
}

/** USD per UTC day, ISO week and calendar month; null: no limit. */
export interface PeriodLimitsUsd {
  daily: number | null;
  weekly: number | null;
  monthly: number | null;
}

/** A change that protects the player less, waiting its 24 h. */
export interface PendingProtectionChange {
  /** e.g. `lossLimitUsd.daily`, `selfExcludedUntil`. */
  setting: string;
  value: number | string | null;
  effectiveAt: string;
}

/** A player's jurisdiction, exclusions and limits (403 KS-4221 and KS-4222 on his spins). */
export interface PlayerProtection {
  playerId: string;
  /** The player's own, else the partner's default. */
  jurisdiction: string;
  selfExcludedUntil: string | null;
  coolingOffUntil: string | null;
  lossLimitUsd: PeriodLimitsUsd;
  wagerLimitUsd: PeriodLimitsUsd;
  pendingChanges: PendingProtectionChange[];
  /** null: never set. */
  updatedAt: string | null;
}

/** Only the fields given change; raising or removing a limit, or ending an exclusion early, waits 24 h. */
export interface SetPlayerProtectionInput {
  /** null: back to the partner's default. */
  jurisdiction?: string | null;
  selfExcludedUntil?: string | null;
  coolingOffUntil?: string | null;
  lossLimitUsd?: Partial<PeriodLimitsUsd>;
  wagerLimitUsd?: Partial<PeriodLimitsUsd>;
}

/** The player's session after a spin (`SpinResult.session`): net position and time played. */
export interface SpinSession {
  startedAt: string;
  elapsedMs: number;
  spins: number;
  /** Payouts minus paid wagers in the session (negative when the player is down). */
  netUsd: number;
  /** Show the player a reality check: the first spin past each of the jurisdiction's reminder marks. */
  reminderDue: boolean;
}

/** A settlement report's spins refused by player protection, by code. */
export interface RefusedSpins {
  "KS-4220": number;
  "KS-4221": number;
  "KS-4222": number;
  "KS-4293": number;
}

/** `client.protection`: jurisdiction profiles and players' protection (docs/jurisdictions.md). */
export function protectionRequests(api: PartnerRequests) {
  const path = (playerId: string) => `${PARTNER_PREFIX}/players/${segment(playerId)}/protection`;
  return {
    jurisdictions: () => api.get<{ jurisdictions: Jurisdiction[] }>("/jurisdictions"),
    get: (playerId: string) => api.get<PlayerProtection>(`/players/${segment(playerId)}/protection`),
    /** A PUT of the same fields is idempotent: retried on any failure. */
    set: (playerId: string, input: SetPlayerProtectionInput) =>
      api.send<PlayerProtection>({ method: "PUT", path: path(playerId), body: input, safety: "idempotent" }),
  };
}

export type ProtectionRequests = ReturnType<typeof protectionRequests>;
