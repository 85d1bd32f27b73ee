import type { Environment } from "@outcomes/core";
import { and, desc, eq, sql } from "drizzle-orm";
import type { Transaction } from "../client.js";
import { idempotencyKeys } from "../schema/idempotency-keys.js";
import type { SqlClient, SqlTransaction } from "./sql-client.js";

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

/** A key's scope in one string: a newline cannot occur in an HTTP header value, so it separates the parts unambiguously. */
const scopeText = (scope: IdempotencyScope) => `${scope.partnerId}\n${scope.environment}\n${scope.key}`;

/**
 * A live record (`created_at` is only idempotency_keys' own in every statement here). Bounded above
 * too, so the days ahead are pruned: a record written by a transaction that started after the
 * reader's is at most minutes younger than the reader's now().
 */
const LIVE = `created_at > now() - ${RETENTION} and created_at < now() + interval '1 hour'`;
const FIND = `
  select request_hash, response_status, response_body from idempotency_keys
  where partner_id = $1 and environment = $2 and key = $3 and ${LIVE}
  order by created_at desc limit 1`;
/**
 * Every key's lock (an advisory lock on a hash of its scope, held until the transaction ends; a
 * collision of two keys only makes them wait for each other), taken in one order (sorted by the
 * subquery), so two batches sharing keys wait for each other rather than deadlock.
 */
const LOCK_MANY = `
  select count(pg_advisory_xact_lock(hashtextextended(k, 0)))
  from (select unnest($1::text[]) as k order by 1) keys`;
/**
 * Each key's live record, if any (n: the key's place in the arrays). One index probe per key (a
 * lateral `limit 1`), whatever the partition's statistics say: a day's partition is empty when the
 * statement is first planned, and a plan made then joined the keys to it by a hash over a full
 * scan, which grew with every record until autoanalyze ran (measured: 13.5 M rows read in 18 s of
 * keyed spins, 753 → 483 spins/s).
 */
const FIND_MANY = `
  select x.n::int as n, r.request_hash, r.response_status, r.response_body
  from unnest($1::text[], $2::text[], $3::text[]) with ordinality as x(partner_id, environment, key, n)
  cross join lateral (
    select request_hash, response_status, response_body from idempotency_keys r
    where r.partner_id = x.partner_id and r.environment = x.environment and r.key = x.key
      and ${LIVE}
    order by r.created_at desc limit 1) r`;
/** Under the keys' locks: a live record cannot appear meanwhile, and the condition (a probe per key, as above) says so again. */
const SAVE_MANY = `
  insert into idempotency_keys (partner_id, environment, key, request_hash, response_status, response_body)
  select x.partner_id, x.environment, x.key, x.request_hash, 200, x.response_body::jsonb
  from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[])
    as x(partner_id, environment, key, request_hash, response_body)
  where (select 1 from idempotency_keys r
    where r.partner_id = x.partner_id and r.environment = x.environment and r.key = x.key and ${LIVE}
    limit 1) is null`;

type RecordRow = { request_hash: string; response_status: number; response_body: unknown };
const recordOf = (row: RecordRow): IdempotencyRecord => ({
  requestHash: row.request_hash,
  responseStatus: row.response_status,
  responseBody: row.response_body,
});

/**
 * The key's live record, read without its lock: a keyed spin that could not be planned or was
 * refused is answered from it when its request was seen before (a replay stands whatever changed
 * since). One that is still running is not seen here; a duplicate that gets as far as the group
 * commit waits for it under the lock (`lockAndFindIdempotencyRecords`).
 */
export async function findIdempotencyRecord(
  client: SqlClient,
  scope: IdempotencyScope,
): Promise<IdempotencyRecord | null> {
  const [row] = await client.unsafe<RecordRow[]>(FIND, [scope.partnerId, scope.environment, scope.key], {
    prepare: true,
  });
  return row ? recordOf(row) : null;
}

/**
 * Serialises every request with these keys until the transaction ends, then reads their live
 * records (answered in the order given, null where none). The read must be a statement of its own
 * after the locks: under READ COMMITTED a statement's snapshot is taken when it starts, so a single
 * statement that first waited for a lock would not see the record the first request committed meanwhile.
 */
export async function lockAndFindIdempotencyRecords(
  tx: SqlTransaction,
  scopes: readonly IdempotencyScope[],
): Promise<(IdempotencyRecord | null)[]> {
  // Sent together (one round trip): Postgres runs the read once the locks are held, and its
  // snapshot is taken then.
  const locked = tx.unsafe(LOCK_MANY, [scopes.map(scopeText)], { prepare: true });
  const column = (pick: (scope: IdempotencyScope) => string) => scopes.map(pick);
  const found = tx.unsafe<(RecordRow & { n: number })[]>(
    FIND_MANY,
    [column((s) => s.partnerId), column((s) => s.environment), column((s) => s.key)],
    { prepare: true },
  );
  const [, rows] = await Promise.all([locked, found]);
  const records: (IdempotencyRecord | null)[] = scopes.map(() => null);
  for (const row of rows) records[row.n - 1] = recordOf(row);
  return records;
}

/** Stores the responses in the caller's transaction, under the keys' locks, beside any expired record of a key. */
export async function saveIdempotencyRecords(
  tx: SqlTransaction,
  records: readonly { scope: IdempotencyScope; requestHash: string; responseBody: unknown }[],
): Promise<void> {
  if (records.length === 0) return;
  const column = (pick: (record: (typeof records)[number]) => string) => records.map(pick);
  const saved = await tx.unsafe(
    SAVE_MANY,
    [
      column((r) => r.scope.partnerId),
      column((r) => r.scope.environment),
      column((r) => r.scope.key),
      column((r) => r.requestHash),
      column((r) => JSON.stringify(r.responseBody)),
    ],
    { prepare: true },
  );
  if (saved.count !== records.length) throw new Error("a live idempotency record appeared under the lock");
}

/**
 * The one-key form on a drizzle transaction, for writes outside the spin path (a free-round grant):
 * the key's lock (the same advisory lock as the spin path's, so a key is serialised whichever route
 * uses it), then its live record, read by a statement of its own after the lock.
 */
export async function lockAndFindIdempotencyRecord(
  tx: Transaction,
  scope: IdempotencyScope,
): Promise<IdempotencyRecord | null> {
  await tx.execute(sql`select pg_advisory_xact_lock(hashtextextended(${scopeText(scope)}, 0))`);
  const [record] = await tx
    .select({
      requestHash: idempotencyKeys.requestHash,
      responseStatus: idempotencyKeys.responseStatus,
      responseBody: idempotencyKeys.responseBody,
    })
    .from(idempotencyKeys)
    .where(
      and(
        eq(idempotencyKeys.partnerId, scope.partnerId),
        eq(idempotencyKeys.environment, scope.environment),
        eq(idempotencyKeys.key, scope.key),
        sql.raw(LIVE),
      ),
    )
    .orderBy(desc(idempotencyKeys.createdAt))
    .limit(1);
  return record ?? null;
}

/** Stores a response under the key's lock (`lockAndFindIdempotencyRecord` found no live record). */
export async function saveIdempotencyRecord(
  tx: Transaction,
  record: { scope: IdempotencyScope; requestHash: string; responseStatus: number; responseBody: unknown },
): Promise<void> {
  await tx.insert(idempotencyKeys).values({
    ...record.scope,
    requestHash: record.requestHash,
    responseStatus: record.responseStatus,
    responseBody: record.responseBody,
  });
}
