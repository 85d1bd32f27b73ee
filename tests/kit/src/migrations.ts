import { randomBytes } from "node:crypto";
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { migrateDatabase } from "@outcomes/db";
import postgres from "postgres";
import { requiredEnv } from "./databases.js";

const MIGRATIONS = fileURLToPath(new URL("../../../drizzle", import.meta.url));

/**
 * An empty database of its own and the migrations folder as it was before migration `tag` (its
 * journal ends at the one before), for tests of what a migration does to existing rows.
 */
export async function databaseBeforeMigration(tag: string) {
  const name = `outcomes_test_migration_${randomBytes(6).toString("hex")}`;
  const adminUrl = requiredEnv("DATABASE_URL");
  const url = Object.assign(new URL(adminUrl), { pathname: `/${name}` }).toString();
  const folder = await mkdtemp(join(tmpdir(), "migrations-"));
  await cp(MIGRATIONS, folder, { recursive: true });
  const journalPath = join(folder, "meta", "_journal.json");
  const journal = JSON.parse(await readFile(journalPath, "utf8")) as { entries: { idx: number; tag: string }[] };
  const cut = journal.entries.findIndex((entry) => entry.tag === tag);
  if (cut < 1) throw new Error(`no migration ${tag} after the first`);
  journal.entries = journal.entries.slice(0, cut);
  await writeFile(journalPath, JSON.stringify(journal));

  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database "${name}"`);
  await admin.end();
  return {
    url,
    /** Applies the migrations before `tag`, as the service's migrator does (`CONCURRENTLY` ones outside a transaction). */
    migrateBefore: () => migrateDatabase(url, folder),
    drop: async () => {
      await rm(folder, { recursive: true, force: true });
      const cleanup = postgres(adminUrl, { max: 1, onnotice: () => {} });
      await cleanup.unsafe(`drop database if exists "${name}" with (force)`);
      await cleanup.end();
    },
  };
}
