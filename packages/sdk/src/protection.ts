import { PARTNER_PREFIX, type PartnerRequests, segment } from "./requests.js";
import type { Schema } from "./schema.js";

// Named from the wire types generated from the partner OpenAPI document, as in types.ts.

/** A jurisdiction profile (`GET /jurisdictions`; docs/jurisdictions.md says where each built-in's figures come from). */
export interface Jurisdiction extends Schema<"Jurisdiction"> {}

/** USD per UTC day, ISO week and calendar month; null: no limit. */
export interface PeriodLimitsUsd extends Schema<"PeriodLimitsUsd"> {}

/** A change that protects the player less, waiting its 24 h. */
export interface PendingProtectionChange extends Schema<"PendingProtectionChange"> {}

/** A player's jurisdiction, exclusions and limits (403 KS-4221 and KS-4222 on his spins). */
export interface PlayerProtection extends Schema<"PlayerProtection"> {}

/** Only the fields given change; raising or removing a limit, or ending an exclusion early, waits 24 h. */
export interface SetPlayerProtectionInput extends Schema<"PutPlayerProtection"> {}

/** The player's session after a spin (`SpinResult.session`): net position and time played. */
export interface SpinSession extends Schema<"SpinSession"> {}

/** A settlement report's spins refused by player protection, by code. */
export interface RefusedSpins extends Schema<"RefusedSpins"> {}

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
