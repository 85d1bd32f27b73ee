import { createHash } from "node:crypto";
import { ErrorCode, ServiceError } from "@outcomes/core";
import {
  type Database,
  findIdempotencyRecord,
  type IdempotencyRecord,
  type IdempotencyScope,
  lockAndFindIdempotencyRecords,
  saveIdempotencyRecords,
  type Transaction,
} from "@outcomes/db";
import { replayedBody, type SpinResultBody } from "@outcomes/records";
import { exactWager } from "./spins/wager.js";

// The one idempotency concern of every keyed command (CONTRACT §4 "Idempotency-Key"): a spin's
// batch runs the protocol's statements in its group commit (spins/write-spins.ts); every create
// (a free-round grant, a game, a PAR sheet) runs `createOnce`. The protocol itself is packages/db's
// (idempotency-keys.ts): lock the keys, read their live records after the lock, write, save the
// answers in the same transaction.

export interface IdempotentRequest {
  scope: IdempotencyScope;
  /** SHA-256 of the request as understood, so `1` and `1.0` (or reordered fields) are the same request. */
  hash: string;
}

type Owner = Pick<IdempotencyScope, "partnerId" | "environment">;

export function idempotentRequest(scope: IdempotencyScope, canonical: Record<string, string | number>) {
  const hash = createHash("sha256").update(JSON.stringify(canonical)).digest("hex");
  return { scope, hash } satisfies IdempotentRequest;
}

/** The owner's key for a request as understood, or null when the request came without one. */
export function keyedRequest(
  owner: Owner,
  key: string | undefined,
  canonical: Record<string, string | number>,
): IdempotentRequest | null {
  if (key === undefined) return null;
  return idempotentRequest({ partnerId: owner.partnerId, environment: owner.environment, key }, canonical);
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
  owner: Owner,
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

/** A create's answer: what it made now (null for a replay), and its body. */
export interface Created<Made, Body> {
  made: Made | null;
  body: Body;
  /** Answered from the key's first request (`Idempotent-Replayed: true`): nothing was made now. */
  replayed: boolean;
}

/** A create's writes, run in the transaction that stores the key's record; a throw writes nothing. */
export type CreateWrites<Made> = (tx: Transaction) => Promise<Made>;

/** One create, keyed or not: its rules, its writes, and how its answer reads. */
export interface CreateCommand<Made, Body> {
  /** The request's key as understood; null runs the create unkeyed (in a transaction all the same). */
  key: IdempotentRequest | null;
  /**
   * The rules (a throw answers the request), run after a repeat had its chance to be answered and
   * before the transaction opens, since they may read through other connections (caches): the
   * writes to run.
   */
  admit(): Promise<CreateWrites<Made>>;
  /** The answer to store and send. */
  present(made: Made): Body;
  /** A stored answer read back (jsonb keeps keys in an order of its own; the record's schema restores the documented one). */
  replay(stored: unknown): Body;
}

/** Every create answers 201 Created; the record keeps it beside the body. */
const CREATED = 201;

/**
 * `createOnce`: a keyed create makes one thing, however often it is sent (24 h, per partner and
 * environment; the same key with another body or route is 400 KS-4101):
 * 1. a quick unlocked read answers a repeat of a committed request before any rule runs (a replay
 *    stands whatever changed since, e.g. a sheet retired after its game was registered);
 * 2. otherwise the rules run, then the writes in a transaction under the key's lock, where a first
 *    request that committed meanwhile answers instead (a concurrent duplicate waits for it);
 * 3. the answer is stored with what was made, in that transaction: a failed create leaves no record,
 *    so its retry runs anew.
 * Any create can take it as it is (the webhook and replay-link creates too): a canonical body
 * (`keyedRequest`) and a command.
 */
export class KeyedCreates {
  constructor(private readonly db: Database) {}

  async createOnce<Made, Body>(command: CreateCommand<Made, Body>): Promise<Created<Made, Body>> {
    const { key } = command;
    const seen = key && (await findIdempotencyRecord(this.db, key.scope));
    if (key && seen) return replayed(command, key, seen);
    const writes = await command.admit();
    return this.db.transaction(async (tx) => {
      const [prior] = key ? await lockAndFindIdempotencyRecords(tx, [key.scope]) : [null];
      if (key && prior) return replayed(command, key, prior);
      const made = await writes(tx);
      const body = command.present(made);
      if (key) {
        await saveIdempotencyRecords(tx, [
          { scope: key.scope, requestHash: key.hash, responseStatus: CREATED, responseBody: body },
        ]);
      }
      return { made, body, replayed: false };
    });
  }
}

function replayed<Made, Body>(
  command: CreateCommand<Made, Body>,
  key: IdempotentRequest,
  record: IdempotencyRecord,
): Created<Made, Body> {
  assertSameRequest(key, record);
  return { made: null, body: command.replay(record.responseBody), replayed: true };
}
