import { createHash } from "node:crypto";
import { ErrorCode, ServiceError } from "@outcomes/core";
import type { IdempotencyRecord, IdempotencyScope } from "@outcomes/db";
import { replayedBody, type SpinResultBody } from "@outcomes/records";
import { exactWager } from "./wager.js";

export interface IdempotentRequest {
  scope: IdempotencyScope;
  /** SHA-256 of the request as understood, so `1` and `1.0` (or reordered fields) are the same request. */
  hash: string;
}

export function idempotentRequest(scope: IdempotencyScope, canonical: Record<string, string | number>) {
  const hash = createHash("sha256").update(JSON.stringify(canonical)).digest("hex");
  return { scope, hash } satisfies IdempotentRequest;
}

/** The key's record is of this very request; the same key with another body (or route) is KS-4101. */
export function assertSameRequest(request: IdempotentRequest, record: IdempotencyRecord): void {
  if (record.requestHash !== request.hash) {
    throw new ServiceError(ErrorCode.InvalidRequest, {
      message: "Idempotency-Key was already used for another request (a different body); use a new key",
      details: [{ path: "Idempotency-Key", message: "already used for another request" }],
    });
  }
}

/** The first request's answer to this one: its result when the bodies agree; the same key with another body is KS-4101. */
export function replayOf(request: IdempotentRequest, record: IdempotencyRecord): SpinResultBody {
  assertSameRequest(request, record);
  return replayedBody(record.responseBody);
}

/**
 * A spin request as understood (the wager as an exact decimal), so `1` and `1.0` are one request.
 * A paid spin's fields are hashed as release 1 hashed them, so its keys replay on every release.
 */
export function keyedSpin(
  owner: { partnerId: string; environment: IdempotencyScope["environment"] },
  request: {
    gameId: number;
    playerId: string;
    wagerUsd?: number | undefined;
    freeRoundsId?: string | null;
    forceTier?: string | null;
  },
  key: string,
): IdempotentRequest {
  const forceTier = request.forceTier ?? undefined;
  return idempotentRequest(
    { partnerId: owner.partnerId, environment: owner.environment, key },
    {
      route: "POST /spins",
      gameId: request.gameId,
      playerId: request.playerId,
      ...(request.wagerUsd === undefined ? {} : { wager: exactWager(request.wagerUsd) }),
      ...(forceTier === undefined ? {} : { forceTier }),
      ...(request.freeRoundsId ? { freeRoundsId: request.freeRoundsId } : {}),
    },
  );
}
