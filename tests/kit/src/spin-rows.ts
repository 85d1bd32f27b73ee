import { type Environment, newId, presentationOf, SAMPLE_PAR_SHEET } from "@outcomes/core";
import {
  blocks,
  type Database,
  ensurePartitions,
  games,
  parSheets,
  partners,
  players,
  spinOutcomes,
  spins,
} from "@outcomes/db";
import { eq, sql } from "drizzle-orm";

/**
 * Spin rows written straight into Postgres, with the rows their foreign keys need, so settlement
 * tests know every figure exactly (the spin path itself is tested through its own API).
 */
export interface SpinFixture {
  partnerId: string;
  environment: Environment;
  gameIds: number[];
  playerId: number;
}

export interface FixtureSpin {
  gameId: number;
  wagerMicros: number;
  payoutMicros: number;
  createdAt: Date;
}

/**
 * An ACTIVE PAR sheet row for fixtures that need a game's foreign key, not its math; its document is
 * the sample sheet's, as every stored sheet has valid tiers (the wager bound reads them).
 */
export async function insertFixtureParSheet(
  db: Database,
  sheet: { partnerId: string; environment: Environment; rtp: string },
): Promise<string> {
  const id = newId("par");
  await db.insert(parSheets).values({
    id,
    partnerId: sheet.partnerId,
    environment: sheet.environment,
    name: "Fixture sheet",
    version: "1",
    status: "ACTIVE",
    drawMode: "independent",
    document: { ...SAMPLE_PAR_SHEET, name: "Fixture sheet" },
    rtp: sheet.rtp,
    certifiedRtp: sheet.rtp,
    hitFrequency: 0.3,
    volatility: 1,
  });
  return id;
}

export async function createSpinFixture(
  db: Database,
  options: { partnerId?: string; environment?: Environment; games?: number; gamesCreatedAt?: Date } = {},
): Promise<SpinFixture> {
  const environment = options.environment ?? "sandbox";
  let partnerId = options.partnerId;
  if (!partnerId) {
    partnerId = newId("ptr");
    await db.insert(partners).values({ id: partnerId, slug: partnerId.toLowerCase(), name: "Fixture partner" });
  }
  const parSheetId = await insertFixtureParSheet(db, { partnerId, environment, rtp: "0.95" });
  const created = options.gamesCreatedAt ?? new Date("2000-01-01T00:00:00.000Z");
  const gameRows = await db
    .insert(games)
    .values(
      Array.from({ length: options.games ?? 1 }, (_, i) => ({
        partnerId: partnerId!,
        environment,
        parSheetId,
        name: `Fixture game ${parSheetId} ${i + 1}`,
        maxWagerMicros: 100_000_000,
        createdAt: created,
      })),
    )
    .returning({ id: games.id });
  const [player] = await db
    .insert(players)
    .values({ partnerId, environment, externalId: newId("plr") })
    .returning({ id: players.id });
  return { partnerId, environment, gameIds: gameRows.map((row) => row.id), playerId: player!.id };
}

const FIXTURE_REELS = [
  ["BAR1", "SEVEN", "BELL"],
  ["LEMON", "SEVEN", "BAR2"],
  ["CHERRY", "SEVEN", "BLANK"],
];

/**
 * Inserts the spins as one new block's outcomes (each outcome is used once), making the day
 * partitions their times need.
 */
export async function insertFixtureSpins(db: Database, fixture: SpinFixture, rows: FixtureSpin[]): Promise<void> {
  if (rows.length === 0) return;
  const gameId = fixture.gameIds[0]!;
  const [next] = await db
    .select({ sequence: sql<number>`coalesce(max(${blocks.sequence}), 0)::int + 1` })
    .from(blocks)
    .where(eq(blocks.gameId, gameId));
  const [block] = await db
    .insert(blocks)
    .values({
      gameId,
      sequence: next!.sequence,
      size: rows.length,
      entries: Buffer.from("[]"),
      commitment: "fixture",
      status: "exhausted",
    })
    .returning({ id: blocks.id });
  const times = rows.map((row) => row.createdAt.getTime());
  await ensurePartitions(db, "spins", { from: new Date(Math.min(...times)), to: new Date(Math.max(...times) + 1) });
  // Dated like the spin path's ids, so a spin is found by its id (its time bounds the look-up).
  const ids = rows.map((row) => newId("spn", row.createdAt.getTime()));
  await db.insert(spinOutcomes).values(
    rows.map((row, index) => ({
      blockId: block!.id,
      outcomeIndex: index,
      spinId: ids[index]!,
      createdAt: row.createdAt,
    })),
  );
  await db.insert(spins).values(
    rows.map((row, index) => {
      const tier = row.payoutMicros > 0 ? "T1" : "T0";
      const multiplierMillionths =
        row.wagerMicros > 0 ? Math.floor((row.payoutMicros * 1_000_000) / row.wagerMicros) : 0;
      return {
        id: ids[index]!,
        partnerId: fixture.partnerId,
        environment: fixture.environment,
        gameId: row.gameId,
        playerId: fixture.playerId,
        blockId: block!.id,
        outcomeIndex: index,
        prizeTier: tier,
        multiplierMillionths,
        wagerMicros: row.wagerMicros,
        payoutMicros: row.payoutMicros,
        balanceAfterMicros: 0,
        // A presentation as spins store one, so the spin can be shown (listings, recall).
        presentation: presentationOf({ tier, multiplierMillionths, reelSymbols: FIXTURE_REELS }),
        createdAt: row.createdAt,
      };
    }),
  );
}
