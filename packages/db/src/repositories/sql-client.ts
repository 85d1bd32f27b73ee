import type { Assume, SQL } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";
import type postgres from "postgres";
import type { Database, Executor } from "../client.js";

/**
 * The spin path talks to postgres.js directly with named prepared statements: one round trip per
 * statement and no re-planning. (drizzle's `execute` never prepares, and postgres.js then spends a
 * second round trip describing every parameterised statement before running it.)
 */
export type SqlPool = postgres.Sql;
export type SqlTransaction = postgres.TransactionSql;
export type SqlClient = SqlPool | SqlTransaction;

/** The postgres.js client under a drizzle handle (drizzle's `$client`, which the `Database` type omits). */
export function sqlClientOf(db: Database): SqlPool {
  return (db as Database & { $client: SqlPool }).$client;
}

/** Where a statement written with drizzle's `sql` template can run: a drizzle handle or transaction, or a postgres.js client. */
export type Queryable = Executor | SqlClient;

const dialect = new PgDialect();

/**
 * Runs a statement written with drizzle's `sql` template on either kind of client. On postgres.js
 * (the spin path's transaction) it is the text drizzle renders, with the values as parameters,
 * prepared like the spin path's own statements; on drizzle it is drizzle's `execute`.
 */
export async function rowsOf<Row extends postgres.Row>(
  on: Queryable,
  statement: SQL,
): Promise<Assume<Row, postgres.Row>[]> {
  if (typeof on !== "function") return on.execute<Row>(statement);
  const query = dialect.sqlToQuery(statement);
  // The values given to the template, as drizzle's own `execute` hands them to postgres.js.
  const params = query.params as postgres.ParameterOrJSON<never>[];
  // Sent now, not when first awaited: statements pipelined on one transaction go in the order called.
  return on.unsafe<Assume<Row, postgres.Row>[]>(query.sql, params, { prepare: true }).execute();
}
