import { randomBytes } from "node:crypto";
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { requiredEnv } from "@outcomes/testkit/databases";
import { drizzle } from "drizzle-orm/postgres-js";
import { migrate } from "drizzle-orm/postgres-js/migrator";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDatabase } from "./client.js";
import { migrateDatabase } from "./migrate.js";
import { insertEvent } from "./repositories/events.js";

const MIGRATIONS = fileURLToPath(new URL("../../../drizzle", import.meta.url));
const EVENT_LOG_MIGRATION = "0009_event_log_and_forced_spins";

const name = `outcomes_test_migration_${randomBytes(6).toString("hex")}`;
const adminUrl = requiredEnv("DATABASE_URL");
const url = Object.assign(new URL(adminUrl), { pathname: `/${name}` }).toString();
let folder: string;

/** The migrations folder as it was before the event log: its journal ends at the one before. */
async function migrationsBefore(tag: string): Promise<string> {
  const copy = await mkdtemp(join(tmpdir(), "migrations-"));
  await cp(MIGRATIONS, copy, { recursive: true });
  const journalPath = join(copy, "meta", "_journal.json");
  const journal = JSON.parse(await readFile(journalPath, "utf8")) as { entries: { idx: number; tag: string }[] };
  const cut = journal.entries.findIndex((entry) => entry.tag === tag);
  expect(cut).toBeGreaterThan(0);
  journal.entries = journal.entries.slice(0, cut);
  await writeFile(journalPath, JSON.stringify(journal));
  return copy;
}

beforeAll(async () => {
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database "${name}"`);
  await admin.end();
  folder = await migrationsBefore(EVENT_LOG_MIGRATION);
});
afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`drop database if exists "${name}" with (force)`);
  await admin.end();
});

describe(`migration ${EVENT_LOG_MIGRATION}`, () => {
  it("numbers existing events per partner and environment in creation order, in the column and the body", async () => {
    const sql = postgres(url, { max: 1, onnotice: () => {} });
    try {
      await migrate(drizzle(sql), { migrationsFolder: folder });
      const rows: Array<[id: string, partner: string, environment: string, createdAt: string]> = [
        ["evt_a3", "ptr_a", "sandbox", "2026-01-03T00:00:00.000Z"],
        ["evt_a1", "ptr_a", "sandbox", "2026-01-01T00:00:00.000Z"],
        ["evt_p1", "ptr_a", "production", "2026-01-02T00:00:00.000Z"],
        ["evt_a2", "ptr_a", "sandbox", "2026-01-02T00:00:00.000Z"],
        ["evt_b1", "ptr_b", "sandbox", "2026-01-05T00:00:00.000Z"],
      ];
      for (const [id, partner, environment, createdAt] of rows) {
        const payload = { id, type: "block.low_reserve", createdAt, environment, data: { gameId: 1 } };
        await sql`insert into events (id, partner_id, environment, type, payload, created_at)
          values (${id}, ${partner}, ${environment}, 'block.low_reserve', ${JSON.stringify(payload)}::jsonb, ${createdAt})`;
      }
    } finally {
      await sql.end();
    }

    await migrateDatabase(url);

    const client = createDatabase(url, { max: 1 });
    try {
      const numbered = await client.sql<{ id: string; sequence: string; body: string }[]>`
        select id, sequence, (payload->>'sequence') as body from events order by id`;
      expect(numbered.map((row) => [row.id, Number(row.sequence), Number(row.body)])).toEqual([
        ["evt_a1", 1, 1],
        ["evt_a2", 2, 2],
        ["evt_a3", 3, 3],
        ["evt_b1", 1, 1],
        ["evt_p1", 1, 1],
      ]);
      const next = await insertEvent(client.db, {
        partnerId: "ptr_a",
        environment: "sandbox",
        type: "block.low_reserve",
        data: { gameId: 2 },
      });
      expect(next.sequence).toBe(4);
    } finally {
      await client.close();
    }
  });
});
