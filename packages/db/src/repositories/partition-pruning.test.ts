import { newId } from "@outcomes/core";
import { createTestDatabase, type TestDatabase } from "@outcomes/testkit/databases";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensurePartitions } from "./partitions.js";
import { spinTotalsByGame } from "./settlement-figures.js";
import { spinLookup } from "./spin-voids.js";
import { spinTimeWindow } from "./spins.js";

/**
 * The planner reads only the partitions a statement's time range can touch: EXPLAIN of the very
 * statements the service runs names the partitions they scan.
 */
let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
  await ensurePartitions(database.db, "spins", {
    from: new Date("2026-01-13T00:00:00Z"),
    to: new Date("2026-01-18T00:00:00Z"),
  });
});
afterAll(async () => {
  await database?.drop();
});

interface PlanNode {
  "Relation Name"?: string;
  "Subplans Removed"?: number;
  Plans?: PlanNode[];
}

/** The tables the plan of `query` reads, once its run-time pruning (the executor's start) is done. */
async function scannedTables(query: { sql: string; params: unknown[] }): Promise<string[]> {
  const [row] = await database.sql.unsafe(`explain (analyze, format json) ${query.sql}`, query.params as never[]);
  const names = new Set<string>();
  const walk = (node: PlanNode) => {
    if (node["Relation Name"]) names.add(node["Relation Name"]);
    for (const child of node.Plans ?? []) walk(child);
  };
  const plan = row!["QUERY PLAN"];
  walk((typeof plan === "string" ? JSON.parse(plan) : plan)[0].Plan);
  return [...names].sort();
}

const key = { partnerId: "ptr_x", environment: "production" as const, reportDate: "2026-01-15" };

describe("partition pruning", () => {
  it("settles a day from that day's spins partition alone", async () => {
    const day = { from: new Date("2026-01-15T00:00:00Z"), to: new Date("2026-01-16T00:00:00Z") };
    expect(await scannedTables(spinTotalsByGame(database.db, key, day).toSQL())).toEqual(["spins_p20260115"]);
    // The unsealed end of a day (the roll-ups cover the rest).
    const tail = { from: new Date("2026-01-15T20:00:00Z"), to: day.to };
    expect(await scannedTables(spinTotalsByGame(database.db, key, tail).toSQL())).toEqual(["spins_p20260115"]);
  });

  it("looks a spin up by its id (recall, void, proof) in the partitions of the day either side of its id's time", async () => {
    const spinId = newId("spn", Date.parse("2026-01-15T12:00:00Z"));
    const owner = { partnerId: "ptr_x", environment: "sandbox" as const };
    const query = spinLookup(database.db, spinId, spinTimeWindow(spinId)!, owner).toSQL();
    expect((await scannedTables(query)).filter((name) => name.startsWith("spins"))).toEqual([
      "spins_p20260114",
      "spins_p20260115",
      "spins_p20260116",
    ]);
  });

  it("looks idempotency keys and a just-written spin up in the last days' partitions only", async () => {
    const keyTables = await scannedTables({
      sql: `select request_hash from idempotency_keys
        where partner_id = $1 and environment = $2 and key = $3 and created_at > now() - interval '24 hours'`,
      params: ["ptr_x", "sandbox", "k"],
    });
    expect(keyTables.length).toBeLessThanOrEqual(2 + 7);
    const spinTables = await scannedTables({
      sql: "select 1 from spins where id = $1 and created_at > now() - interval '1 day'",
      params: ["spn_x"],
    });
    // The five January days (and any other day ended over a day ago) are pruned: only yesterday's,
    // today's and the days ahead remain.
    const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10).replaceAll("-", "");
    const [yesterday, today] = [dayOf(Date.now() - 24 * 3600_000), dayOf(Date.now())];
    expect(spinTables.every((name) => name.startsWith("spins_p") && name.slice(7) >= yesterday)).toBe(true);
    expect(spinTables).toContain(`spins_p${today}`);
    expect(spinTables.length).toBeGreaterThanOrEqual(7);
  });
});
