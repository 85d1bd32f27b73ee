import type { ErrorDetail } from "./errors.js";

/** Lifetime of a key issued or rotated without an explicit `expiresAt`. */
export const DEFAULT_KEY_LIFETIME_DAYS = 365;
/** How long the old key keeps working after a rotation unless `overlapHours` says otherwise. */
export const DEFAULT_ROTATION_OVERLAP_HOURS = 24;
/** A rotation overlap longer than the 30-day expiry notice would defeat the point of rotating. */
export const MAX_ROTATION_OVERLAP_HOURS = 720;

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

export function defaultKeyExpiry(now: Date): Date {
  return new Date(now.getTime() + DEFAULT_KEY_LIFETIME_DAYS * DAY_MS);
}

/** A requested expiry must lie in the future; null when acceptable. */
export function expiryProblem(expiresAt: Date, now: Date): ErrorDetail | null {
  if (Number.isNaN(expiresAt.getTime())) return { path: "expiresAt", message: "must be an ISO-8601 date-time" };
  if (expiresAt.getTime() <= now.getTime()) return { path: "expiresAt", message: "must be in the future" };
  return null;
}

export function overlapProblem(overlapHours: number): ErrorDetail | null {
  if (!Number.isFinite(overlapHours) || overlapHours < 0 || overlapHours > MAX_ROTATION_OVERLAP_HOURS) {
    return { path: "overlapHours", message: `must be a number of hours from 0 to ${MAX_ROTATION_OVERLAP_HOURS}` };
  }
  return null;
}

/**
 * The old key's expiry after a rotation: it keeps working for the overlap, but a rotation never
 * extends a key's life (an expiry already sooner than the overlap stays).
 */
export function rotatedKeyExpiry(currentExpiresAt: Date, now: Date, overlapHours: number): Date {
  const overlapEnd = now.getTime() + Math.round(overlapHours * HOUR_MS);
  return new Date(Math.min(currentExpiresAt.getTime(), overlapEnd));
}
