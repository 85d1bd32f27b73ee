import type { Environment } from "@outcomes/core";
import { sql } from "drizzle-orm";
import type { Database } from "../client.js";
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

/**
 * Deletes every expired record, in batches of about `batch` rows (each its own short transaction,
 * so a spin replacing an expired record waits a batch at most), looping until a batch comes up
 * short; returns how many. Each batch is one range delete on the `created_at` index up to the
 * batch's last row. Safe to run from any number of processes at once: they take the same rows in
 * the same (index) order, so one waits for the other and finds them gone, and a record a spin has
 * just replaced no longer matches when the delete re-checks it.
 */
export async function purgeExpiredIdempotencyRecords(
  db: Database,
  options: { batch?: number; onBatch?: (deletedSoFar: number) => Promise<void> | void } = {},
): Promise<number> {
  const batch = options.batch ?? 50_000;
  const expired = sql`created_at <= now() - ${sql.raw(RETENTION)}`;
  let total = 0;
  for (;;) {
    // A short last batch has no batch-th row and takes all that is left. The plain age condition
    // stays too, so the planner estimates the rows from statistics (the index, not a table scan).
    const deleted = await db.execute(sql`
      delete from ${idempotencyKeys} where ${expired} and created_at <= coalesce((
        select created_at from ${idempotencyKeys} where ${expired}
        order by created_at offset ${batch - 1} limit 1), 'infinity')`);
    total += deleted.count;
    await options.onBatch?.(total);
    if (deleted.count < batch) return total;
  }
}
