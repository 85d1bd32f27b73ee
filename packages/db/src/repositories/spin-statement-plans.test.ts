import { newId, presentationOf } from "@outcomes/core";
import { createTestDatabase, type TestDatabase } from "@outcomes/testkit/databases";
import { createSpinFixture, type SpinFixture } from "@outcomes/testkit/spin-rows";
import { drizzle } from "drizzle-orm/postgres-js";
import postgres from "postgres";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type NewSpin, recordSpins } from "./record-spins.js";

/**
 * The spin statements are prepared, and Postgres soon runs them by their generic plans, which expect
 * 50 players and 100 spins a batch whatever the batch holds. Over tables of a few thousand rows such
 * plans read `blocks` (the plain statement), `players` and `player_protections` (the checked one)
 * whole per batch, 2 ms a batch at 20,000 blocks; the statements ask for their rows by index.
 */
let database: TestDatabase;
let fixture: SpinFixture;
let blockId: number;
beforeAll(async () => {
  database = await createTestDatabase();
  fixture = await createSpinFixture(database.db);
  const made = await database.sql.unsafe(
    `insert into blocks (game_id, sequence, size, entries, commitment)
     select $1, g, 1000, '\\x5b5d'::bytea, 't' from generate_series(1, 5000) g returning id`,
    [fixture.gameIds[0]!],
  );
  blockId = Number(made.at(-1)!.id);
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
  await database.sql.unsafe("analyze blocks, players, player_protections");
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

/** What the generic plan of the statement recording `spins` reads: "<node type> <table>" each. */
async function tablesRead(spins: NewSpin[], checked: boolean): Promise<Set<string>> {
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
    expect(await recordSpins(sql, spins, checked)).toHaveLength(spins.length);
  } finally {
    await sql.end();
  }
  const reads = new Set<string>();
  const walk = (node: PlanNode) => {
    if (node["Relation Name"]) reads.add(`${node["Node Type"]} ${node["Relation Name"]}`);
    for (const child of node.Plans ?? []) walk(child);
  };
  for (const plan of plans) walk(plan);
  return reads;
}

const seqScans = (reads: Set<string>, tables: string[]) =>
  [...reads].filter((read) => tables.some((table) => read === `Seq Scan ${table}`));

it("reads the batch's blocks by index (the plain statement)", async () => {
  const reads = await tablesRead(spinsOf(12, 0), false);
  expect(reads).toContain("Index Scan blocks");
  expect(seqScans(reads, ["blocks"])).toEqual([]);
});

it("reads each player's rows by index (the checked statement)", async () => {
  const reads = await tablesRead(spinsOf(12, 12), true);
  expect(reads).toContain("Index Scan player_protections");
  expect(seqScans(reads, ["blocks", "players", "player_protections", "partners"])).toEqual([]);
});
