import { isProvisionalReport } from "@outcomes/core";
import { databaseBeforeMigration } from "@outcomes/testkit/migrations";
import { eq } from "drizzle-orm";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDatabase } from "./client.js";
import { migrateDatabase } from "./migrate.js";
import { overdueProvisionalReports } from "./repositories/settlement-candidates.js";
import { partners } from "./schema/partners.js";
import { settlementReports } from "./schema/settlement-reports.js";

const MIGRATION = "0021_exact_settlements_spin_ceiling";

let scratch: Awaited<ReturnType<typeof databaseBeforeMigration>>;
beforeAll(async () => {
  scratch = await databaseBeforeMigration(MIGRATION);
});
afterAll(async () => {
  await scratch?.drop();
});

describe(`migration ${MIGRATION}`, () => {
  it("keeps release 2's reports exact, stores whether each was provisional, and gives partners no ceiling", async () => {
    await scratch.migrateBefore();
    const sql = postgres(scratch.url, { max: 1, onnotice: () => {} });
    try {
      await sql`insert into partners (id, slug, name) values ('ptr_a', 'ptr-a', 'A')`;
      // As release 2 stores them: bigint amounts; one generated after its day, one during it.
      const report = (id: string, day: string, generatedAt: string, status: string) => sql`
        insert into settlement_reports (id, partner_id, environment, report_date, status, total_spins,
          total_wagered_micros, total_paid_micros, games, generated_at, acknowledged_at)
        values (${id}, 'ptr_a', 'sandbox', ${day}, ${status}, 2, 9007199254740991, 1, '[]'::jsonb, ${generatedAt},
          ${status === "acknowledged" ? generatedAt : null})`;
      await report("stl_final", "2026-05-01", "2026-05-02T02:00:00.000Z", "GENERATED");
      await report("stl_early", "2026-05-02", "2026-05-02T23:59:59.999Z", "acknowledged");
    } finally {
      await sql.end();
    }

    await migrateDatabase(scratch.url);

    const client = createDatabase(scratch.url, { max: 1 });
    try {
      const rows = await client.db.select().from(settlementReports).orderBy(settlementReports.reportDate);
      expect(rows.map((row) => [row.id, row.provisional, row.totalWageredMicros, row.totalPaidMicros])).toEqual([
        ["stl_final", false, 9_007_199_254_740_991n, 1n],
        ["stl_early", true, 9_007_199_254_740_991n, 1n],
      ]);
      expect(rows.map(isProvisionalReport)).toEqual([false, true]);
      // The report acknowledged while provisional is the one a run must still make final.
      expect(await overdueProvisionalReports(client.db, "2026-06-01", "2026-05-31")).toEqual([
        { partnerId: "ptr_a", environment: "sandbox", reportDate: "2026-05-02" },
      ]);
      // A numeric amount past 2^63 now fits, where bigint stopped.
      await client.db
        .update(settlementReports)
        .set({ totalPaidMicros: 9_900_000_000_000_000_000n })
        .where(eq(settlementReports.id, "stl_final"));
      const [partner] = await client.db.select().from(partners);
      expect(partner?.spinCeilingMicros).toBeNull();
    } finally {
      await client.close();
    }
  });
});
