import type { Environment } from "@outcomes/core";
import { sql } from "drizzle-orm";
import type { Executor } from "../client.js";
import { idempotencyKeys } from "../schema/idempotency-keys.js";
import type { SqlTransaction } from "./sql-client.js";

/**
 * Records are honoured for 24 h; older ones are ignored, replaced by a new use of the key, and
 * purged. Statements run on the spin's postgres.js transaction, prepared (see `SqlClient`).
 */
const RETENTION = "interval '24 hours'";

export interface IdempotencyScope {
  partnerId: string;
  environment: Environment;
  key: string;
}

export interface IdempotencyRecord {
  requestHash: string;
  responseStatus: number;
  responseBody: unknown;
}

const LOCK = "select pg_advisory_xact_lock(hashtextextended($1, 0))";
const FIND = `
  select request_hash, response_status, response_body from idempotency_keys
  where partner_id = $1 and environment = $2 and key = $3 and created_at > now() - ${RETENTION}`;
const SAVE = `
  insert into idempotency_keys (partner_id, environment, key, request_hash, response_status, response_body)
  values ($1, $2, $3, $4, $5, $6::jsonb)
  on conflict (partner_id, environment, key) do update set
    request_hash = excluded.request_hash, response_status = excluded.response_status,
    response_body = excluded.response_body, created_at = now()
  where idempotency_keys.created_at <= now() - ${RETENTION}`;

/**
 * Serialises every request with this key until the transaction ends (an advisory lock on a hash of
 * partner, environment and key; a collision of two keys only makes them wait for each other), then
 * reads the live record. The read must be a statement of its own after the lock: under READ
 * COMMITTED a statement's snapshot is taken when it starts, so a single statement that first waited
 * for the lock would not see the record the first request committed meanwhile.
 */
export async function lockIdempotencyKey(
  tx: SqlTransaction,
  scope: IdempotencyScope,
): Promise<IdempotencyRecord | null> {
  // A newline cannot occur in an HTTP header value, so it separates the parts unambiguously.
  await tx.unsafe(LOCK, [`${scope.partnerId}\n${scope.environment}\n${scope.key}`], { prepare: true });
  const [row] = await tx.unsafe<{ request_hash: string; response_status: number; response_body: unknown }[]>(
    FIND,
    [scope.partnerId, scope.environment, scope.key],
    { prepare: true },
  );
  return row
    ? { requestHash: row.request_hash, responseStatus: row.response_status, responseBody: row.response_body }
    : null;
}

/** Stores the response in the caller's transaction (under the lock); an expired record is replaced. */
export async function saveIdempotencyRecord(
  tx: SqlTransaction,
  scope: IdempotencyScope,
  record: IdempotencyRecord,
): Promise<void> {
  const saved = await tx.unsafe(
    SAVE,
    [
      scope.partnerId,
      scope.environment,
      scope.key,
      record.requestHash,
      record.responseStatus,
      JSON.stringify(record.responseBody),
    ],
    { prepare: true },
  );
  if (saved.count !== 1) throw new Error("a live idempotency record appeared under the lock");
}

/** Deletes up to `batch` expired records; returns how many. Safe to run from any number of processes. */
export async function purgeExpiredIdempotencyRecords(db: Executor, batch = 1000): Promise<number> {
  const deleted = await db.execute(sql`
    delete from ${idempotencyKeys} where ctid in (
      select ctid from ${idempotencyKeys} where created_at <= now() - ${sql.raw(RETENTION)} limit ${batch})`);
  return deleted.count;
}
