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

export function createDatabase(url: string, options: { max?: number } = {}): DatabaseClient {
  const sql = postgres(url, {
    max: options.max ?? 10,
    onnotice: () => {},
    // bigint sums (numeric) come back as strings; we convert where read.
  });
  const db = drizzle(sql, { schema });
  return { db, sql, close: () => sql.end({ timeout: 5 }) };
}
