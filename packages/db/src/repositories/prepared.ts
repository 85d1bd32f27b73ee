import type { Executor } from "../client.js";

/**
 * A drizzle query built once per database handle and run as a prepared statement: drizzle does not
 * rebuild its SQL on every call, and postgres.js sends it as a named statement of each connection
 * (one round trip; an unprepared statement with parameters costs a second one, its describe),
 * which Postgres parses once and, after five runs, plans once (a generic plan, pruning partitions
 * at executor start from the parameters). `build` names its parameters with `sql.placeholder`.
 */
export function preparedPerHandle<Query>(build: (db: Executor) => Query): (db: Executor) => Query {
  const byHandle = new WeakMap<Executor, Query>();
  return (db) => {
    let query = byHandle.get(db);
    if (query === undefined) {
      query = build(db);
      byHandle.set(db, query);
    }
    return query;
  };
}
