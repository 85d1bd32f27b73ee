/** An error and its causes (drizzle wraps the driver's error in `cause`), a few levels deep. */
function* causes(error: unknown): Generator<Record<string, unknown>> {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current && typeof current === "object"; depth++) {
    yield current as Record<string, unknown>;
    current = (current as { cause?: unknown }).cause;
  }
}

/** Postgres SQLSTATE of a failed query. */
function pgErrorCode(error: unknown): string | undefined {
  for (const { code } of causes(error)) if (typeof code === "string" && /^[0-9A-Z]{5}$/.test(code)) return code;
  return undefined;
}

export function isUniqueViolation(error: unknown): boolean {
  return pgErrorCode(error) === "23505";
}

/**
 * Postgres rolled the transaction back to break a deadlock (40P01) or a serialization conflict
 * (40001): nothing of it committed, and running it again is safe.
 */
export function isRetryableConflict(error: unknown): boolean {
  const code = pgErrorCode(error);
  return code === "40P01" || code === "40001";
}

/** The constraint a failed statement violated. */
export function constraintName(error: unknown): string | undefined {
  for (const { constraint_name: name } of causes(error)) if (typeof name === "string") return name;
  return undefined;
}

/**
 * Whether a failed write may nevertheless have committed: the connection went away after the
 * statement or its COMMIT was sent, so no answer says either way. A server's ERROR reply (the
 * statement or transaction was rolled back) and a query that never left the pool's queue (cancelled
 * there, or a BEGIN that found no connection) are certain failures.
 */
export function mayHaveCommitted(error: unknown): boolean {
  for (const { severity, code } of causes(error)) {
    if (severity === "ERROR") return false;
    if (code === "POOL_TIMEOUT" || (code === "57014" && severity === undefined)) return false;
  }
  return true;
}

/**
 * The server refused the statement itself (an ERROR reply), for a reason that may lie in one of its
 * rows: not a lost connection (08), a server short of resources (53), or a statement cancelled or
 * timed out (57), which would fail any part of it the same way.
 */
export function refusedStatement(error: unknown): boolean {
  for (const { severity, code } of causes(error)) {
    if (severity === "ERROR") return typeof code === "string" && !/^(08|53|57)/.test(code);
  }
  return false;
}

/** The player figure (as the API names it) whose bound a failed spin write would have passed, if that was why it failed. */
export type BoundedPlayerFigure = "balanceUsd" | "totalWageredUsd" | "totalPaidUsd" | "totalSpins";

const PLAYER_BOUNDS: Record<string, BoundedPlayerFigure> = {
  players_balance_bound: "balanceUsd",
  players_total_wagered_bound: "totalWageredUsd",
  players_total_paid_bound: "totalPaidUsd",
};

/**
 * A spin write refused because a player's figure would leave its exact range: a `players_*_bound`
 * check (2^53 − 1 micro-USD), or an integer out of range (22003: `total_spins` past 2^31 − 1).
 */
export function exceededPlayerBound(error: unknown): BoundedPlayerFigure | null {
  const code = pgErrorCode(error);
  if (code === "22003") return "totalSpins";
  if (code !== "23514") return null;
  return PLAYER_BOUNDS[constraintName(error) ?? ""] ?? null;
}

/** Why player protection refused a spin (`refuse_spin`, protection-checks.ts), as the statement judged it. */
export type ProtectionVerdict =
  | { check: "restricted"; restriction: "self_exclusion" | "cooling_off"; until: string }
  | { check: "stake"; jurisdiction: string; maxWagerMicros: number }
  | { check: "pace"; retryAfterMs: number }
  | { check: "limit"; limit: "loss" | "wager"; period: "daily" | "weekly" | "monthly"; remainingMicros: number };

/** The verdict of a spin write that player protection refused (SQLSTATE PP001, the verdict in its detail). */
export function protectionVerdict(error: unknown): ProtectionVerdict | null {
  if (pgErrorCode(error) !== "PP001") return null;
  for (const { detail } of causes(error))
    if (typeof detail === "string") return JSON.parse(detail) as ProtectionVerdict;
  return null;
}
