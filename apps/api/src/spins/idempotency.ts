import { createHash } from "node:crypto";
import { ErrorCode, ServiceError } from "@outcomes/core";
import { type IdempotencyScope, lockIdempotencyKey, type SqlTransaction } from "@outcomes/db";

export interface IdempotentRequest {
  scope: IdempotencyScope;
  /** SHA-256 of the request as understood, so `1` and `1.0` (or reordered fields) are the same request. */
  hash: string;
}

export function idempotentRequest(scope: IdempotencyScope, canonical: Record<string, string | number>) {
  const hash = createHash("sha256").update(JSON.stringify(canonical)).digest("hex");
  return { scope, hash } satisfies IdempotentRequest;
}

/**
 * Takes the key's lock for the rest of the transaction and returns the first request's response
 * when there is one; the same key with another body is KS-4101.
 */
export async function priorResponse(tx: SqlTransaction, request: IdempotentRequest): Promise<unknown | null> {
  const record = await lockIdempotencyKey(tx, request.scope);
  if (!record) return null;
  if (record.requestHash !== request.hash) {
    throw new ServiceError(ErrorCode.InvalidRequest, {
      message: "Idempotency-Key was already used for another request (a different body); use a new key",
      details: [{ path: "Idempotency-Key", message: "already used for another request" }],
    });
  }
  return record.responseBody;
}
