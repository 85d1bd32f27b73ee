/** Days before expiry at which `api_key.expiring` is sent, largest first (CONTRACT §7). */
export const KEY_EXPIRY_THRESHOLDS_DAYS = [30, 7, 1] as const;
export type KeyExpiryThreshold = (typeof KEY_EXPIRY_THRESHOLDS_DAYS)[number];

const DAY_MS = 24 * 3_600_000;

/**
 * The notice a key is due now: the smallest threshold t with `expiresAt − now ≤ t days`, or null
 * for a key already expired or more than 30 days away.
 */
export function dueExpiryThreshold(expiresAt: Date, now: Date): KeyExpiryThreshold | null {
  const remaining = expiresAt.getTime() - now.getTime();
  if (remaining <= 0) return null;
  let due: KeyExpiryThreshold | null = null;
  for (const threshold of KEY_EXPIRY_THRESHOLDS_DAYS) {
    if (remaining <= threshold * DAY_MS) due = threshold;
  }
  return due;
}

/** The thresholds a notice at `due` settles: itself and every larger one (they count as passed). */
export function settledThresholds(due: KeyExpiryThreshold): KeyExpiryThreshold[] {
  return KEY_EXPIRY_THRESHOLDS_DAYS.filter((threshold) => threshold >= due);
}
