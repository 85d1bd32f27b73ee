/** Postgres SQLSTATE of a failed query, looking through drizzle's wrapper (`cause`). */
function pgErrorCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current && typeof current === "object"; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && /^[0-9A-Z]{5}$/.test(code)) return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

export function isUniqueViolation(error: unknown): boolean {
  return pgErrorCode(error) === "23505";
}

/**
 * Whether a failed write may nevertheless have committed: the connection went away after the
 * statement or its COMMIT was sent, so no answer says either way. A server's ERROR reply (the
 * statement or transaction was rolled back) and a query that never left the pool's queue (cancelled
 * there, or a BEGIN that found no connection) are certain failures.
 */
export function mayHaveCommitted(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current && typeof current === "object"; depth++) {
    const { severity, code } = current as { severity?: unknown; code?: unknown };
    if (severity === "ERROR") return false;
    if (code === "POOL_TIMEOUT" || (code === "57014" && severity === undefined)) return false;
    current = (current as { cause?: unknown }).cause;
  }
  return true;
}
