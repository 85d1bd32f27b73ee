import type { Environment } from "@outcomes/core";
import type { SqlTransaction } from "./sql-client.js";

/**
 * Records are honoured for 24 h; older ones are ignored, a new use of the key stores a new record
 * beside them, and the day partition holding them is dropped whole once it has expired
 * (`dropExpiredIdempotencyPartitions`). Statements run on the spin's postgres.js transaction,
 * prepared (see `SqlClient`); their age condition prunes the partitions that hold only expired records.
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
const LIVE = `partner_id = $1 and environment = $2 and key = $3 and created_at > now() - ${RETENTION}`;
const FIND = `
  select request_hash, response_status, response_body from idempotency_keys where ${LIVE}
  order by created_at desc limit 1`;
/** Under the key's lock: a live record cannot appear meanwhile, and the condition says so again. */
const SAVE = `
  insert into idempotency_keys (partner_id, environment, key, request_hash, response_status, response_body)
  select $1::text, $2::text, $3::text, $4::text, $5::int, $6::jsonb
  where not exists (select 1 from idempotency_keys where ${LIVE})`;

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

/** Stores the response in the caller's transaction (under the lock), beside any expired record of the key. */
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
