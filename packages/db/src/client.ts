import { drizzle, type PostgresJsDatabase } from "drizzle-orm/postgres-js";
import postgres from "postgres";
import * as schema from "./schema/index.js";

export type Database = PostgresJsDatabase<typeof schema>;
export type Transaction = Parameters<Parameters<Database["transaction"]>[0]>[0];
/** A database handle or an open transaction: repositories take either. */
export type Executor = Database | Transaction;

export interface DatabaseClient {
  db: Database;
  sql: postgres.Sql;
  close: () => Promise<void>;
}

/**
 * Limits that turn a mistake (a transaction waiting for a second connection of its own pool, a
 * forgotten lock, a runaway statement) into an error within seconds instead of a hung process.
 * The first three are Postgres settings of every connection; the last is the pool's.
 */
export interface ConnectionLimits {
  statementTimeoutMs: number;
  lockTimeoutMs: number;
  /** Postgres ends a session idle this long inside a transaction, which frees its connection. */
  idleInTransactionTimeoutMs: number;
  /** How long a query or a BEGIN may wait for a free connection before it fails. */
  acquireTimeoutMs: number;
}

/** The API answers in milliseconds; anything that waits seconds is a fault, answered KS-5003. */
export const API_CONNECTION_LIMITS: ConnectionLimits = {
  statementTimeoutMs: 15_000,
  lockTimeoutMs: 5_000,
  idleInTransactionTimeoutMs: 10_000,
  acquireTimeoutMs: 5_000,
};

/** Workers run long set-based statements (settlement over a day of spins, bulk expiry). */
export const WORKER_CONNECTION_LIMITS: ConnectionLimits = {
  statementTimeoutMs: 600_000,
  lockTimeoutMs: 60_000,
  idleInTransactionTimeoutMs: 300_000,
  acquireTimeoutMs: 60_000,
};

export interface DatabaseOptions {
  max?: number;
  /** None for one-off scripts (migrations, seeding, benchmarks); services pass theirs. */
  limits?: ConnectionLimits;
}

export function createDatabase(url: string, options: DatabaseOptions = {}): DatabaseClient {
  const { limits } = options;
  const pool = postgres(url, {
    max: options.max ?? 10,
    onnotice: () => {},
    // bigint sums (numeric) come back as strings; we convert where read.
    // postgres.js waits 3^n/100 s (up to 20 s) before reconnecting after n failed connections, and
    // queries queue meanwhile: a few seconds of outage left the API hanging for 10–20 s after
    // Postgres was back (tests/faults/postgres-outage.test.ts). Retry at most 1 s apart instead.
    backoff: (retries: number) => Math.min(0.05 * 2 ** retries, 1),
    // A black-holed Postgres fails a request in seconds, not the default 30.
    connect_timeout: 5,
    ...(limits && {
      connection: {
        statement_timeout: limits.statementTimeoutMs,
        lock_timeout: limits.lockTimeoutMs,
        idle_in_transaction_session_timeout: limits.idleInTransactionTimeoutMs,
      },
    }),
  });
  const sql = limits ? withAcquireTimeout(pool, limits.acquireTimeoutMs) : pool;
  const db = drizzle(sql, { schema });
  return { db, sql, close: () => pool.end({ timeout: 5 }) };
}

/** A BEGIN that found no free connection in time; nothing of its transaction ran. */
export class PoolTimeoutError extends Error {
  readonly code = "POOL_TIMEOUT";
}

type Begin = (...args: unknown[]) => Promise<unknown>;
type QueuedQuery = Promise<unknown> & { state?: unknown; cancel: () => unknown };

/**
 * postgres.js queues a query for as long as every connection is busy in a transaction, with no
 * limit of its own. This bounds that wait: a query still queued (not yet on a connection, which is
 * when postgres.js sets `state`) after `ms` is cancelled, which removes it from the queue and
 * rejects it (57014); a BEGIN whose transaction has not started by then is rejected at once and
 * rolled back as soon as it does start. Queries inside a transaction run on its connection and are
 * not affected.
 */
function withAcquireTimeout(pool: postgres.Sql, ms: number): postgres.Sql {
  const bound = <T>(query: T): T => {
    const pending = query as QueuedQuery;
    if (!(pending instanceof Promise) || typeof pending.cancel !== "function") return query;
    // Armed when the query is first awaited (postgres.js queues it only then), cleared when it settles.
    const then = pending.then;
    let armed = false;
    // biome-ignore lint/suspicious/noThenProperty: postgres.js queues a query when it is first awaited, so the timer starts there.
    pending.then = function (this: QueuedQuery, ...args: Parameters<QueuedQuery["then"]>) {
      if (!armed) {
        armed = true;
        const timer = setTimeout(() => {
          if (pending.state === undefined || pending.state === null) pending.cancel();
        }, ms);
        then.call(
          pending,
          () => clearTimeout(timer),
          () => clearTimeout(timer),
        );
      }
      return then.apply(this, args);
    } as QueuedQuery["then"];
    return query;
  };

  const begin: Begin = (...args) => {
    const fn = args.pop() as (tx: postgres.TransactionSql) => unknown;
    let state: "waiting" | "started" | "abandoned" = "waiting";
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        if (state !== "waiting") return;
        state = "abandoned";
        reject(new PoolTimeoutError(`no database connection within ${ms} ms for a transaction`));
      }, ms);
      (pool.begin as Begin)(...args, (tx: postgres.TransactionSql) => {
        clearTimeout(timer);
        if (state === "abandoned") throw new PoolTimeoutError("transaction started after its caller gave up");
        state = "started";
        return fn(tx);
      }).then(resolve, (error: unknown) => {
        clearTimeout(timer);
        // An abandoned transaction's own rollback error has no one left to hear it.
        if (state !== "abandoned") reject(error);
      });
    });
  };

  return new Proxy(pool, {
    apply: (target, thisArg, args) => bound(Reflect.apply(target, thisArg, args)),
    get: (target, property, receiver) => {
      if (property === "unsafe") return (...args: Parameters<postgres.Sql["unsafe"]>) => bound(target.unsafe(...args));
      if (property === "begin") return begin;
      return Reflect.get(target, property, receiver);
    },
  });
}

/** Resolves once Postgres has answered a query on the handle's pool (the API's readiness check). */
export async function pingDatabase(db: Database): Promise<void> {
  await db.execute("select 1");
}
