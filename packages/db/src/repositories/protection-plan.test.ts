import { newId, presentationOf } from "@outcomes/core";
import { createTestDatabase, type TestDatabase } from "@outcomes/testkit/databases";
import { createSpinFixture, type SpinFixture } from "@outcomes/testkit/spin-rows";
import { drizzle } from "drizzle-orm/postgres-js";
import postgres from "postgres";
import { afterAll, beforeAll, expect, it } from "vitest";
import { blocks } from "../schema/blocks.js";
import { type NewSpin, recordSpins } from "./record-spins.js";

/**
 * The checked spin statement is prepared, and Postgres soon runs it by its generic plan, which
 * expects 50 players a batch whatever the batch holds. Over small tables such a plan read players
 * and player_protections whole per batch; the statement asks for each player's rows by index.
 */
let database: TestDatabase;
let fixture: SpinFixture;
let blockId: number;
beforeAll(async () => {
  database = await createTestDatabase();
  fixture = await createSpinFixture(database.db);
  const [block] = await database.db
    .insert(blocks)
    .values({ gameId: fixture.gameIds[0]!, sequence: 1, size: 1000, entries: Buffer.from("[]"), commitment: "t" })
    .returning({ id: blocks.id });
  blockId = block!.id;
  const owner = [fixture.partnerId, fixture.environment];
  await database.sql.unsafe(
    `insert into players (partner_id, environment, external_id) select $1, $2, 'p-' || g from generate_series(1, 2000) g`,
    owner,
  );
  await database.sql.unsafe(
    `insert into player_protections (partner_id, environment, external_id, loss_daily_micros)
     select $1, $2, 'p-' || g, 1000000000 from generate_series(1, 1000) g`,
    owner,
  );
  await database.sql.unsafe("analyze players, player_protections");
});
afterAll(async () => {
  await database?.drop();
});

interface PlanNode {
  "Node Type": string;
  "Relation Name"?: string;
  Plans?: PlanNode[];
}

function spinsOf(players: number, from: number): NewSpin[] {
  return Array.from({ length: players }, (_, i) => {
    const outcome = { blockId, index: from + i, tier: "T0", multiplierMillionths: 0, reelSymbols: [["A"]] };
    return {
      id: newId("spn"),
      partnerId: fixture.partnerId,
      environment: fixture.environment,
      gameId: fixture.gameIds[0]!,
      externalPlayerId: `p-${i + 1}`,
      outcome,
      position: { blockId, index: outcome.index },
      wagerMicros: 1_000_000,
      payoutMicros: 0,
      presentation: presentationOf(outcome),
      freeRoundsId: null,
    };
  });
}

it("reads each player's rows by index under the generic plan", async () => {
  const plans: PlanNode[] = [];
  // auto_explain at NOTICE level hands each plan to this client (postgres.js's onnotice).
  const sql = postgres(database.url, {
    max: 1,
    onnotice: (notice) => {
      const message = notice.message ?? "";
      const plan = message.indexOf("{"); // after "duration: … ms  plan:"
      if (plan >= 0) plans.push(JSON.parse(message.slice(plan)).Plan);
    },
  });
  drizzle(sql); // the service's client passes JSON text through as drizzle sets it to
  try {
    await sql.unsafe("load 'auto_explain'");
    await sql.unsafe(`set plan_cache_mode = force_generic_plan; set auto_explain.log_min_duration = 0;
      set auto_explain.log_format = json; set auto_explain.log_level = notice`);
    const recorded = await recordSpins(sql, spinsOf(12, 0), true);
    expect(recorded).toHaveLength(12);
  } finally {
    await sql.end();
  }
  const reads = new Set<string>();
  const walk = (node: PlanNode) => {
    if (node["Relation Name"]) reads.add(`${node["Node Type"]} ${node["Relation Name"]}`);
    for (const child of node.Plans ?? []) walk(child);
  };
  for (const plan of plans) walk(plan);
  expect(reads).toContain("Index Scan player_protections");
  expect([...reads].filter((read) => /^Seq Scan (players|player_protections|partners)$/.test(read))).toEqual([]);
});
