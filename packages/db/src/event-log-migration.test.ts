import { databaseBeforeMigration } from "@outcomes/testkit/migrations";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDatabase } from "./client.js";
import { migrateDatabase } from "./migrate.js";
import { insertEvent } from "./repositories/events.js";

const EVENT_LOG_MIGRATION = "0009_event_log_and_forced_spins";

let scratch: Awaited<ReturnType<typeof databaseBeforeMigration>>;
let url: string;
beforeAll(async () => {
  scratch = await databaseBeforeMigration(EVENT_LOG_MIGRATION);
  url = scratch.url;
});
afterAll(async () => {
  await scratch?.drop();
});

describe(`migration ${EVENT_LOG_MIGRATION}`, () => {
  it("numbers existing events per partner and environment in creation order, in the column and the body", async () => {
    await scratch.migrateBefore();
    const sql = postgres(url, { max: 1, onnotice: () => {} });
    try {
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
          values (${id}, ${partner}, ${environment}, 'block.low_reserve', ${JSON.stringify(payload)}::text::jsonb, ${createdAt})`;
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
