import * as schema from "@outcomes/db";
import { games } from "@outcomes/db";
import type { TestApi } from "@outcomes/testkit/api";
import { getTableName, is, type SQL, sql } from "drizzle-orm";
import { PgTable } from "drizzle-orm/pg-core";

/**
 * Everything a request could change, as one comparable value: a digest of every table's rows and
 * the length of every game's outcome queue. Tables come from the schema exports, so a table added
 * later is covered without touching this file.
 */
export interface StateSnapshot {
  tables: Record<string, string>;
  outcomeQueues: Record<string, number>;
}

const TABLES: string[] = (Object.values(schema) as unknown[])
  .flatMap((value) => (is(value, PgTable) ? [getTableName(value)] : []))
  .sort();

/**
 * `api_keys.last_used_at` is the one column a refused request may move: authentication succeeded
 * (that key was used) before validation refused the body.
 */
const VOLATILE_COLUMNS = ["last_used_at"];

function tableDigest(name: string): SQL {
  const drop = sql.join(
    VOLATILE_COLUMNS.map((column) => sql`- ${column}::text`),
    sql` `,
  );
  return sql`select ${name}::text as name, count(*)::int as rows,
    md5(coalesce(string_agg((to_jsonb(t) ${drop})::text, '|' order by (to_jsonb(t) ${drop})::text), '')) as digest
    from ${sql.identifier(name)} t`;
}

export async function snapshotState(api: TestApi): Promise<StateSnapshot> {
  const query = sql.join(TABLES.map(tableDigest), sql` union all `);
  const rows = (await api.database.db.execute(query)) as unknown as Array<{
    name: string;
    rows: number;
    digest: string;
  }>;
  const tables = Object.fromEntries(rows.map((row) => [row.name, `${row.rows}:${row.digest}`]));
  const gameIds = await api.database.db
    .select({ id: games.id, partnerId: games.partnerId, environment: games.environment })
    .from(games);
  const lengths = await Promise.all(gameIds.map((game) => api.deps.redis.llen(api.deps.keys.outcomeQueue(game))));
  const outcomeQueues = Object.fromEntries(gameIds.map(({ id }, index) => [String(id), lengths[index] ?? 0]));
  return { tables, outcomeQueues };
}
