import { fileURLToPath } from "node:url";
import { CURRENT_RELEASE } from "@outcomes/core";
import { readMigrationFiles } from "drizzle-orm/migrator";
import postgres from "postgres";

const MIGRATIONS_FOLDER = fileURLToPath(new URL("../../../drizzle", import.meta.url));

/** Creates the database named in the URL when it does not exist yet (a laptop's first start). */
async function ensureDatabase(url: string): Promise<void> {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.slice(1));
  const admin = new URL(url);
  admin.pathname = "/postgres";
  const sql = postgres(admin.toString(), { max: 1, onnotice: () => {} });
  try {
    const rows = await sql`select 1 from pg_database where datname = ${name}`;
    if (rows.length === 0) {
      await sql.unsafe(`create database "${name.replaceAll('"', '""')}"`).catch((error: { code?: string }) => {
        // Another process created it between our check and our create.
        if (error.code !== "42P04") throw error;
      });
    }
  } finally {
    await sql.end();
  }
}

/** How long one DDL statement may queue for its table lock before it gives way (and tries again). */
const LOCK_TIMEOUT_MS = 1_000;
/** Tries of one migration whose lock was not granted in time, a second apart and more. */
const LOCK_ATTEMPTS = 30;

/**
 * Applies every migration in `drizzle/` not applied yet; safe to repeat, and to run while the
 * previous release serves on the same database (docs/upgrades.md):
 *
 * - each migration commits on its own, so the locks one takes are held for that migration alone
 *   (drizzle's migrator holds every migration's locks until the last one commits);
 * - a statement queues for its lock at most LOCK_TIMEOUT_MS (while it queues, the table's readers and
 *   writers queue behind it), then the migration rolls back and tries again a moment later;
 * - a migration with `CONCURRENTLY` (an index built without blocking writes) runs outside a
 *   transaction, a statement at a time (a failed build leaves an invalid index: such a migration
 *   drops it first, `DROP INDEX CONCURRENTLY IF EXISTS`, so it can run again).
 *
 * The bookkeeping is drizzle's own (`drizzle.__drizzle_migrations`, by journal time), so drizzle's
 * migrator, and the previous release's, see the same state.
 *
 * A fresh install (no migration applied before this run) has no earlier release that could run
 * beside this one: its rollout is recorded as finished, so every feature is on from the first start
 * (`npm start`, `docker compose up` on an empty database). A database an earlier release migrated
 * waits for `release finish` (docs/upgrades.md).
 */
export async function migrateDatabase(url: string, migrationsFolder = MIGRATIONS_FOLDER): Promise<void> {
  await ensureDatabase(url);
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    // One migrator at a time across processes (two `npm start`s, compose replicas).
    await sql`select pg_advisory_lock(7283541)`;
    await sql`create schema if not exists drizzle`;
    await sql`create table if not exists drizzle.__drizzle_migrations (id serial primary key, hash text not null, created_at bigint)`;
    const [last] = await sql<{ created_at: string }[]>`
      select created_at from drizzle.__drizzle_migrations order by created_at desc limit 1`;
    const appliedUntil = last ? Number(last.created_at) : -1;
    for (const migration of readMigrationFiles({ migrationsFolder })) {
      if (migration.folderMillis <= appliedUntil) continue;
      await withLockRetries(() => apply(sql, migration));
    }
    // A test's cut of the migrations (`databaseBeforeMigration`) is no install of this release.
    if (!last && migrationsFolder === MIGRATIONS_FOLDER) {
      await sql`insert into release_rollouts (release) values (${CURRENT_RELEASE}) on conflict do nothing`;
    }
  } finally {
    await sql.end();
  }
}

type Migration = ReturnType<typeof readMigrationFiles>[number];

async function apply(sql: postgres.Sql, migration: Migration): Promise<void> {
  const statements = migration.sql.map((statement) => statement.trim()).filter((statement) => statement !== "");
  const record = (run: postgres.Sql | postgres.TransactionSql) =>
    run`insert into drizzle.__drizzle_migrations (hash, created_at) values (${migration.hash}, ${migration.folderMillis})`;
  if (statements.some((statement) => /\bconcurrently\b/i.test(statement))) {
    await sql.unsafe(`set lock_timeout = ${LOCK_TIMEOUT_MS}`);
    try {
      for (const statement of statements) await sql.unsafe(statement);
      await record(sql);
    } finally {
      await sql.unsafe("reset lock_timeout");
    }
    return;
  }
  await sql.begin(async (tx) => {
    await tx.unsafe(`set local lock_timeout = ${LOCK_TIMEOUT_MS}`);
    for (const statement of statements) await tx.unsafe(statement);
    await record(tx);
  });
}

async function withLockRetries(run: () => Promise<void>): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (error) {
      if ((error as { code?: string }).code !== "55P03" || attempt === LOCK_ATTEMPTS) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.min(attempt, 5) * 200));
    }
  }
}
