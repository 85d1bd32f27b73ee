import type { Environment } from "@outcomes/core";
import { type SQL, sql } from "drizzle-orm";
import { type Queryable, rowsOf } from "./sql-client.js";

/**
 * The one idempotency protocol of every keyed command (a spin batch, a grant, a game, a sheet):
 * 1. `findIdempotencyRecord`, unlocked, answers a repeat of a committed request before any rule runs;
 * 2. in the command's transaction, `lockAndFindIdempotencyRecords` takes the keys' locks and reads
 *    their live records by a statement after the locks (a first request that committed meanwhile);
 * 3. the command writes, and `saveIdempotencyRecords` stores its answers in that same transaction,
 *    so a request that failed leaves no record.
 *
 * Records are honoured for 24 h; older ones are ignored, a new use of the key stores a new record
 * beside them, and the day partition holding them is dropped whole once it has expired
 * (`dropExpiredIdempotencyPartitions`). The statements run on either client (`rowsOf`): prepared on
 * the spin path's postgres.js transaction, through drizzle elsewhere. Their age condition prunes the
 * partitions that hold only expired records.
 */

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

/** A record to store: the key, the hash of the request as understood, and its answer. */
export interface NewIdempotencyRecord extends IdempotencyRecord {
  scope: IdempotencyScope;
}

/** A key's scope in one string: a newline cannot occur in an HTTP header value, so it separates the parts unambiguously. */
const scopeText = (scope: IdempotencyScope) => `${scope.partnerId}\n${scope.environment}\n${scope.key}`;

/**
 * A live record of `r` (idempotency_keys). Bounded above too, so the days ahead are pruned: a record
 * written by a transaction that started after the reader's is at most minutes younger than the
 * reader's now().
 */
const LIVE = sql.raw(`r.created_at > now() - interval '24 hours' and r.created_at < now() + interval '1 hour'`);

/** Arrays sent as one Postgres array parameter each, so a statement's text is the same for any number of keys. */
const textArray = (values: readonly string[]) => sql`${sql.param(values)}::text[]`;
const columns = (scopes: readonly IdempotencyScope[]) => ({
  partners: textArray(scopes.map((s) => s.partnerId)),
  environments: textArray(scopes.map((s) => s.environment)),
  keys: textArray(scopes.map((s) => s.key)),
});

/**
 * Each key's live record, if any (n: the key's place in the arrays). One index probe per key (a
 * lateral `limit 1`), whatever the partition's statistics say: a day's partition is empty when the
 * statement is first planned, and a plan made then joined the keys to it by a hash over a full
 * scan, which grew with every record until autoanalyze ran (measured: 13.5 M rows read in 18 s of
 * keyed spins, 753 → 483 spins/s).
 */
function findMany(scopes: readonly IdempotencyScope[]): SQL {
  const { partners, environments, keys } = columns(scopes);
  return sql`
    select x.n::int as n, r.request_hash, r.response_status, r.response_body
    from unnest(${partners}, ${environments}, ${keys}) with ordinality as x(partner_id, environment, key, n)
    cross join lateral (
      select request_hash, response_status, response_body from idempotency_keys r
      where r.partner_id = x.partner_id and r.environment = x.environment and r.key = x.key and ${LIVE}
      order by r.created_at desc limit 1) r`;
}

/**
 * Every key's lock (an advisory lock on a hash of its scope, held until the transaction ends; a
 * collision of two keys only makes them wait for each other), taken in one order (sorted by the
 * subquery), so two batches sharing keys wait for each other rather than deadlock. Release 2 takes
 * the same locks: a key is serialised whichever release or command uses it.
 */
const lockMany = (scopes: readonly IdempotencyScope[]) => sql`
  select count(pg_advisory_xact_lock(hashtextextended(k, 0)))
  from (select unnest(${textArray(scopes.map(scopeText))}) as k order by 1) keys`;

type RecordRow = { n: number; request_hash: string; response_status: number; response_body: unknown };
const recordOf = (row: RecordRow): IdempotencyRecord => ({
  requestHash: row.request_hash,
  responseStatus: row.response_status,
  responseBody: row.response_body,
});

/**
 * The key's live record, read without its lock: a repeat of a request that committed is answered
 * from it before any rule runs (a replay stands whatever changed since). One that is still running
 * is not seen here; the duplicate then waits for it under the lock (`lockAndFindIdempotencyRecords`).
 */
export async function findIdempotencyRecord(on: Queryable, scope: IdempotencyScope): Promise<IdempotencyRecord | null> {
  const [row] = await rowsOf<RecordRow>(on, findMany([scope]));
  return row ? recordOf(row) : null;
}

/**
 * Serialises every request with these keys until the transaction ends, then reads their live
 * records (answered in the order given, null where none). The read must be a statement of its own
 * after the locks: under READ COMMITTED a statement's snapshot is taken when it starts, so a single
 * statement that first waited for a lock would not see the record the first request committed meanwhile.
 */
export async function lockAndFindIdempotencyRecords(
  tx: Queryable,
  scopes: readonly IdempotencyScope[],
): Promise<(IdempotencyRecord | null)[]> {
  // Sent together (one round trip): Postgres runs the read once the locks are held, and its
  // snapshot is taken then.
  const [, rows] = await Promise.all([rowsOf(tx, lockMany(scopes)), rowsOf<RecordRow>(tx, findMany(scopes))]);
  const records: (IdempotencyRecord | null)[] = scopes.map(() => null);
  for (const row of rows) records[row.n - 1] = recordOf(row);
  return records;
}

/**
 * Stores the answers in the caller's transaction, under the keys' locks, beside any expired record of
 * a key. Under the locks a live record cannot appear after the read; were one there, the statement
 * fails (a null hash) and with it the transaction: a check in SQL, not in the caller, because the
 * spin path sends this statement together with its COMMIT.
 */
export async function saveIdempotencyRecords(tx: Queryable, records: readonly NewIdempotencyRecord[]): Promise<void> {
  if (records.length === 0) return;
  // One JSON parameter: the answers go as objects, not as strings escaped again inside a text[].
  const rows = records.map((r) => ({
    partner_id: r.scope.partnerId,
    environment: r.scope.environment,
    key: r.scope.key,
    request_hash: r.requestHash,
    response_status: r.responseStatus,
    response_body: r.responseBody,
  }));
  await rowsOf(
    tx,
    sql`
      insert into idempotency_keys (partner_id, environment, key, request_hash, response_status, response_body)
      select x.partner_id, x.environment, x.key,
        case when (select 1 from idempotency_keys r
          where r.partner_id = x.partner_id and r.environment = x.environment and r.key = x.key and ${LIVE}
          limit 1) is null then x.request_hash end,
        x.response_status, x.response_body
      from json_to_recordset(${JSON.stringify(rows)}::json)
        as x(partner_id text, environment text, key text, request_hash text, response_status int, response_body jsonb)`,
  );
}
