import { newId, presentationOf, type QueuedOutcome } from "@outcomes/core";
import { createTestDatabase, type TestDatabase } from "@outcomes/testkit/databases";
import { createSpinFixture, type SpinFixture } from "@outcomes/testkit/spin-rows";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { blocks } from "../schema/blocks.js";
import { players } from "../schema/players.js";
import { type NewSpin, type RecordedSpin, recordSpins } from "./record-spins.js";
import { recordSpin } from "./spins.js";

let database: TestDatabase;
let fixture: SpinFixture;
let externalId: string;
let blockId: number;
let nextIndex = 0;

beforeAll(async () => {
  database = await createTestDatabase();
  fixture = await createSpinFixture(database.db);
  const [player] = await database.db.select().from(players).where(eq(players.id, fixture.playerId));
  externalId = player!.externalId;
  const [block] = await database.db
    .insert(blocks)
    .values({ gameId: fixture.gameIds[0]!, sequence: 1, size: 10_000, entries: Buffer.from("[]"), commitment: "t" })
    .returning({ id: blocks.id });
  blockId = block!.id;
});
afterAll(async () => {
  await database?.drop();
});

function spinOf(wagerMicros: number, payoutMicros: number): NewSpin {
  const outcome: QueuedOutcome = {
    blockId,
    index: nextIndex++,
    tier: "T0",
    multiplierMillionths: 0,
    reelSymbols: [["A"], ["B"], ["C"]],
  };
  return {
    id: newId("spn"),
    partnerId: fixture.partnerId,
    environment: fixture.environment,
    gameId: fixture.gameIds[0]!,
    externalPlayerId: externalId,
    outcome,
    position: { blockId: outcome.blockId, index: outcome.index },
    wagerMicros,
    payoutMicros,
    presentation: presentationOf(outcome),
    freeRoundsId: null,
  };
}

describe("created_at follows commit order per player", () => {
  it("dates a later batch after every spin of an earlier one, whatever their sizes", async () => {
    // A large batch, then at once a small one: the old per-batch `clock + k ms` dated the second
    // batch's spin inside the first batch's 200 ms.
    const first = await recordSpins(
      database.sql,
      Array.from({ length: 200 }, () => spinOf(1_000_000, 0)),
    );
    const [second] = await recordSpins(database.sql, [spinOf(1_000_000, 0)]);
    const [third] = [await recordSpin(database.sql, spinOf(1_000_000, 2_000_000))];
    const chain = [...first, second, third].map((recorded) => recorded as RecordedSpin);
    const times = chain.map((spin) => spin.createdAt.getTime());
    expect(times).toEqual([...times].sort((a, b) => a - b));
    expect(new Set(times).size).toBe(times.length);
    // Balances chain in the same order: -1 USD per spin, then +1.
    expect(chain.map((spin) => spin.balanceAfterMicros)).toEqual([
      ...Array.from({ length: 201 }, (_, i) => -(i + 1) * 1_000_000),
      -200_000_000,
    ]);
  });
});
