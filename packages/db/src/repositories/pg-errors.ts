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
