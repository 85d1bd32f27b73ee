import {
  createTableRelationsHelpers,
  type ExtractTablesWithRelations,
  extractTablesRelationalConfig,
  type RelationalSchemaConfig,
} from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";
import { PostgresJsSession, PostgresJsTransaction } from "drizzle-orm/postgres-js";
import type postgres from "postgres";
import type { Database, Transaction } from "../client.js";
import * as schema from "../schema/index.js";

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

const dialect = new PgDialect();
type Tables = ExtractTablesWithRelations<typeof schema>;
const tables = extractTablesRelationalConfig<Tables>(schema, createTableRelationsHelpers);
const relational: RelationalSchemaConfig<Tables> = {
  fullSchema: schema,
  schema: tables.tables,
  tableNamesMap: tables.tableNamesMap,
};

/**
 * A drizzle transaction on an open postgres.js transaction (assembled exactly as drizzle's own
 * `transaction()` does), so repositories written in drizzle can join a transaction the spin path began.
 */
export function drizzleTransactionOn(tx: SqlTransaction): Transaction {
  // drizzle's typings constrain a session's client to `Sql`, which `TransactionSql` (an Omit of
  // it) does not satisfy; drizzle's own transaction() makes exactly this pairing at run time.
  const session = new PostgresJsSession(tx as unknown as SqlPool, dialect, relational);
  return new PostgresJsTransaction(
    dialect,
    session as unknown as ConstructorParameters<typeof PostgresJsTransaction<typeof schema, Tables>>[1],
    relational,
  );
}
