import { fileURLToPath } from "node:url";
import { drizzle } from "drizzle-orm/postgres-js";
import { migrate } from "drizzle-orm/postgres-js/migrator";
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

/** Applies every migration in `drizzle/`; applied ones are skipped, so it is safe to repeat. */
export async function migrateDatabase(url: string): Promise<void> {
  await ensureDatabase(url);
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    // One migrator at a time across processes (two `npm start`s, compose replicas).
    await sql`select pg_advisory_lock(7283541)`;
    await migrate(drizzle(sql), { migrationsFolder: MIGRATIONS_FOLDER });
  } finally {
    await sql.end();
  }
}
