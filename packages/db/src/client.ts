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
    // postgres.js waits 3^n/100 s (up to 20 s) before reconnecting after n failed connections, and
    // queries queue meanwhile: a few seconds of outage left the API hanging for 10–20 s after
    // Postgres was back (tests/faults/postgres-outage.test.ts). Retry at most 1 s apart instead.
    backoff: (retries: number) => Math.min(0.05 * 2 ** retries, 1),
    // A black-holed Postgres fails a request in seconds, not the default 30.
    connect_timeout: 5,
  });
  const db = drizzle(sql, { schema });
  return { db, sql, close: () => sql.end({ timeout: 5 }) };
}
