/**
 * A free-round grant's status (CONTRACT §14), computed whenever it is read: `cancelled` once
 * cancelled, else `expired` from `expiresAt` on, else `active`. No job moves it.
 */
export const FREE_ROUND_STATUSES = ["active", "expired", "cancelled"] as const;
export type FreeRoundStatus = (typeof FREE_ROUND_STATUSES)[number];
