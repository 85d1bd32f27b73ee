import { setTimeout as sleep } from "node:timers/promises";
import { presentSettlementFigures } from "@outcomes/core";
import { createTestDatabase, type TestDatabase } from "@outcomes/testkit/databases";
import { createSpinFixture, insertFixtureSpins, type SpinFixture } from "@outcomes/testkit/spin-rows";
import { and, eq } from "drizzle-orm";
import type postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freeRoundSpins, spinHourlyTotals, spins, spinVoids } from "../schema/index.js";
import { computeReportFigures, figuresOf } from "./settlement-figures.js";
import { generateSettlementReport } from "./settlements.js";
import { rollupCoverage, type SealResult, sealSpinRollups } from "./spin-rollups.js";

/**
 * The seal on a timeline of its own: the database clock is replaced by `now` (from 2026-03-10
 * 05:30 UTC on), while transaction ids and snapshots are the real ones of this Postgres.
 */
let database: TestDatabase;
let fixture: SpinFixture;
const at = (time: string) => new Date(`2026-03-10T${time}Z`);
const HOUR_MS = 3_600_000;

beforeAll(async () => {
  database = await createTestDatabase();
  fixture = await createSpinFixture(database.db, { environment: "production", games: 2 });
});
afterAll(async () => {
  await database?.drop();
});

const spin = (time: string, wagerMicros: number, payoutMicros = 0, game = 0) => ({
  gameId: fixture.gameIds[game]!,
  wagerMicros,
  payoutMicros,
  createdAt: at(time),
});

/**
 * Any writing transaction on this Postgres cluster (other test files, a seed) holds the seal back
 * until it ends, as it should: step until the hours are in (normally at once).
 */
async function sealUntil(now: Date, sealedUntil: Date): Promise<SealResult> {
  for (let attempt = 0; attempt < 2400; attempt++) {
    const result = await sealSpinRollups(database.db, { now });
    if (result.sealedUntil.getTime() >= sealedUntil.getTime()) return result;
    await sleep(25);
  }
  throw new Error(`not sealed until ${sealedUntil.toISOString()}`);
}

async function hourRows() {
  return database.db
    .select()
    .from(spinHourlyTotals)
    .where(and(eq(spinHourlyTotals.partnerId, fixture.partnerId), eq(spinHourlyTotals.environment, "production")))
    .orderBy(spinHourlyTotals.hour, spinHourlyTotals.gameId);
}

const key = () => ({ partnerId: fixture.partnerId, environment: "production" as const, reportDate: "2026-03-10" });

describe("sealSpinRollups", { timeout: 90_000 }, () => {
  it("starts coverage at the hour the first step runs in; earlier hours stay with the spins", async () => {
    await insertFixtureSpins(database.db, fixture, [spin("01:00:00.000", 7_000_000, 1_000_000)]);
    const first = await sealSpinRollups(database.db, { now: at("05:30:00.000") });
    expect(first).toEqual({ sealedUntil: at("05:00:00.000"), sealedHours: 0 });
    expect(await rollupCoverage(database.db)).toEqual({
      coveredFrom: at("05:00:00.000"),
      sealedUntil: at("05:00:00.000"),
    });
  });

  it("sums finished hours per game once the transactions that could still add to them have ended", async () => {
    await insertFixtureSpins(database.db, fixture, [
      spin("05:10:00.000", 1_000_000, 2_500_000),
      spin("05:59:59.999", 2_000_000),
      spin("06:00:00.000", 3_000_000, 0, 1),
      spin("06:30:00.000", 4_000_000, 4_000_000, 1),
      spin("07:00:00.000", 9_000_000), // in the hour still open at 07:05
    ]);
    const recorded = await sealSpinRollups(database.db, { now: at("07:05:00.000") });
    expect(recorded.sealedHours).toBe(0); // this step only records the candidate
    const sealed = await sealUntil(at("07:06:00.000"), at("07:00:00.000"));
    expect(sealed).toEqual({ sealedUntil: at("07:00:00.000"), sealedHours: 2 });
    expect(
      (await hourRows()).map((row) => [
        row.hour.toISOString(),
        row.gameId,
        row.totalSpins,
        row.totalWageredMicros,
        row.totalPaidMicros,
      ]),
    ).toEqual([
      ["2026-03-10T05:00:00.000Z", fixture.gameIds[0], 2, 3_000_000n, 2_500_000n],
      ["2026-03-10T06:00:00.000Z", fixture.gameIds[1], 2, 7_000_000n, 4_000_000n],
    ]);
  });

  it("waits for a transaction that was running when the hour was recorded, then counts its spin", async () => {
    // Several hours in a row: a transaction that holds the newest id is the case a snapshot's xmax
    // gets wrong, and it comes up in most rounds on a quiet cluster.
    for (let round = 0; round < 8; round++) {
      const hourStart = new Date(at("07:00:00.000").getTime() + round * HOUR_MS);
      const boundary = new Date(hourStart.getTime() + HOUR_MS);
      let release!: () => void;
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      let inFlight!: Promise<unknown>;
      await new Promise<void>((started) => {
        inFlight = database.sql.begin(async (tx) => {
          await tx`select txid_current()`; // it has its id, as a spin's transaction has by its insert
          started();
          await gate;
          await insertRawSpin(tx, fixture, {
            createdAt: new Date(hourStart.getTime() + 20 * 60_000),
            wagerMicros: 5_000_000,
          });
        });
      });
      try {
        await sealSpinRollups(database.db, { now: new Date(boundary.getTime() + 5 * 60_000) });
        for (let step = 0; step < 3; step++) {
          const held = await sealSpinRollups(database.db, { now: new Date(boundary.getTime() + 6 * 60_000) });
          expect(held.sealedUntil.getTime(), `round ${round}`).toBe(hourStart.getTime());
        }
      } finally {
        release(); // a failed round must not leave its transaction holding every later seal back
        await inFlight;
      }
      await sealUntil(new Date(boundary.getTime() + 7 * 60_000), boundary);
      const sealed = (await hourRows()).filter((row) => row.hour.getTime() === hourStart.getTime());
      // 07:00 already had one spin of 9 USD (the open hour of the previous test).
      const expected = round === 0 ? [[2, 14_000_000n]] : [[1, 5_000_000n]];
      expect(sealed.map((row) => [row.totalSpins, row.totalWageredMicros])).toEqual(expected);
    }
  });

  it("lets two copies step at once without summing an hour twice", async () => {
    await insertFixtureSpins(database.db, fixture, [spin("15:15:00.000", 1_000_000)]);
    await sealSpinRollups(database.db, { now: at("16:05:00.000") });
    await sleep(50);
    const results = await Promise.all([
      sealUntil(at("16:06:00.000"), at("16:00:00.000")),
      sealUntil(at("16:06:00.000"), at("16:00:00.000")),
    ]);
    expect(results.map((result) => result.sealedHours).sort()).toEqual([0, 1]);
    expect((await hourRows()).filter((row) => row.hour.getTime() === at("15:00:00.000").getTime())).toHaveLength(1);
  });
});

describe("report figures over roll-ups and spins", () => {
  it("adds the spins before coverage, the sealed hours and the open hours into the exact day", async () => {
    await insertFixtureSpins(database.db, fixture, [spin("23:59:59.999", 10_000_000, 30_000_000, 1)]);
    const fromRollups = await computeReportFigures(database.db, key());
    const fromSpins = await computeReportFigures(database.db, key(), "spins");
    expect(fromRollups).toEqual(fromSpins);
    // 01:00 (before coverage) + 05:00–15:59 sealed (5 + 8 + 1 spins) + 23:59:59.999 (open).
    expect(fromRollups).toMatchObject({
      totalSpins: 16,
      totalWageredMicros: 77_000_000n,
      totalPaidMicros: 37_500_000n,
    });
  });

  it("reads sealed hours from the roll-ups, not from the spins", async () => {
    // Remove a spin of a sealed hour behind the roll-ups' back: only the spins path sees it.
    await database.db
      .delete(spins)
      .where(and(eq(spins.partnerId, fixture.partnerId), eq(spins.createdAt, at("06:30:00.000"))));
    expect((await computeReportFigures(database.db, key())).totalSpins).toBe(16);
    expect((await computeReportFigures(database.db, key(), "spins")).totalSpins).toBe(15);
  });
});

/** A spin written in the caller's transaction (its own block, as the fixture does). */
async function insertRawSpin(
  tx: postgres.TransactionSql,
  owner: SpinFixture,
  spinRow: { createdAt: Date; wagerMicros: number },
) {
  const gameId = owner.gameIds[0]!;
  const [block] = await tx<[{ id: string }]>`
    insert into blocks (game_id, sequence, size, entries, commitment, status)
    values (${gameId}, (select coalesce(max(sequence), 0) + 1 from blocks where game_id = ${gameId}), 1, '[]', 'test',
      'exhausted')
    returning id`;
  await tx`select ensure_time_partitions('spins', 'day', ${spinRow.createdAt.toISOString()}, ${spinRow.createdAt.toISOString()}::timestamptz + interval '1 millisecond')`;
  await tx`
    insert into spins (id, partner_id, environment, game_id, player_id, block_id, outcome_index, prize_tier,
      multiplier_millionths, wager_micros, payout_micros, balance_after_micros, presentation, created_at)
    values (${`spn_raw_${block!.id}`}, ${owner.partnerId}, ${owner.environment}, ${gameId}, ${owner.playerId},
      ${block!.id}, 0, 'T0', 0, ${spinRow.wagerMicros}, 0, 0, '{}', ${spinRow.createdAt.toISOString()})`;
}

describe("a partner whose hour passes the bigint range (CONTRACT §9)", () => {
  it("is summed exactly, and the seal goes on for every partner", async () => {
    const flooder = await createSpinFixture(database.db, { environment: "sandbox" });
    const whaleDay = (time: string) => new Date(`2026-03-11T${time}Z`);
    // 1,100 payouts of 9e15 micro-USD (each within a player's bound) sum to 9.9e18, past 2^63 − 1.
    await insertFixtureSpins(
      database.db,
      flooder,
      Array.from({ length: 1_100 }, () => ({
        gameId: flooder.gameIds[0]!,
        wagerMicros: 9_000_000_000_000,
        payoutMicros: 9_000_000_000_000_000,
        createdAt: whaleDay("01:10:00.000"),
      })),
    );
    await insertFixtureSpins(database.db, fixture, [
      { ...spin("00:00:00.000", 2_000_000), createdAt: whaleDay("01:20:00.000") },
    ]);

    await sealSpinRollups(database.db, { now: whaleDay("02:05:00.000") });
    await sealUntil(whaleDay("02:06:00.000"), whaleDay("02:00:00.000"));

    const [flooded] = await database.db
      .select()
      .from(spinHourlyTotals)
      .where(
        and(eq(spinHourlyTotals.partnerId, flooder.partnerId), eq(spinHourlyTotals.hour, whaleDay("01:00:00.000"))),
      );
    expect(flooded).toMatchObject({ totalSpins: 1_100, totalPaidMicros: 9_900_000_000_000_000_000n });
    const others = { ...key(), reportDate: "2026-03-11" };
    expect(await computeReportFigures(database.db, others)).toMatchObject({
      totalSpins: 1,
      totalWageredMicros: 2_000_000n,
    });
    // Its own report is generated and stored exactly too (issue 33): 9.9e18 micro-USD is past 2^63.
    const whale = { partnerId: flooder.partnerId, environment: "sandbox" as const, reportDate: "2026-03-11" };
    expect(await computeReportFigures(database.db, whale)).toMatchObject({
      totalSpins: 1_100,
      totalWageredMicros: 9_900_000_000_000_000n,
      totalPaidMicros: 9_900_000_000_000_000_000n,
    });
    const { report } = await generateSettlementReport(database.db, whale, "refuse");
    expect(report).toMatchObject({ totalPaidMicros: 9_900_000_000_000_000_000n, provisional: false });
    const stored = figuresOf(report);
    expect(stored.games[0]).toMatchObject({ totalPaidMicros: 9_900_000_000_000_000_000n });
    expect(presentSettlementFigures(stored)).toMatchObject({
      figuresExact: false,
      exact: { totalWageredUsd: "9900000000", totalPaidUsd: "9900000000000", netUsd: "-9890100000000" },
    });
  });
});

/** Inserts a fixture's spins, and answers the ids and times of all its spins in creation order. */
async function insertInOrder(fixture: SpinFixture, spun: Parameters<typeof insertFixtureSpins>[2]) {
  await insertFixtureSpins(database.db, fixture, spun);
  return database.db
    .select({ id: spins.id, createdAt: spins.createdAt })
    .from(spins)
    .where(eq(spins.partnerId, fixture.partnerId))
    .orderBy(spins.createdAt);
}

describe("voids in the roll-ups (CONTRACT §13)", () => {
  it("sums each void into the hour it was made, whatever the spin's day, and reads sealed hours from the roll-ups", async () => {
    const voider = await createSpinFixture(database.db, { environment: "sandbox", games: 2 });
    const day = (time: string) => new Date(`2026-03-11T${time}Z`);
    const spun = [
      // Before the roll-ups' coverage began: the 10th's report reads it from `spins`.
      { gameId: voider.gameIds[0]!, wagerMicros: 2_000_000, payoutMicros: 10_000_000, createdAt: at("02:00:00.000") },
      { gameId: voider.gameIds[1]!, wagerMicros: 3_000_000, payoutMicros: 0, createdAt: day("03:10:00.000") },
      { gameId: voider.gameIds[1]!, wagerMicros: 5_000_000, payoutMicros: 0, createdAt: day("03:20:00.000") },
    ];
    const ids = await insertInOrder(voider, spun);
    // Voids of the 10th's spin and of one of the 11th made in the 11th's 03:00 hour, one more in its open hours.
    const voidOf = (index: number, voidedAt: Date) => ({
      spinId: ids[index]!.id,
      partnerId: voider.partnerId,
      environment: "sandbox" as const,
      gameId: spun[index]!.gameId,
      playerId: voider.playerId,
      spinCreatedAt: ids[index]!.createdAt,
      prizeTier: "T1",
      wagerMicros: spun[index]!.wagerMicros,
      payoutMicros: spun[index]!.payoutMicros,
      reason: "wallet refused",
      voidedAt,
    });
    await database.db
      .insert(spinVoids)
      .values([voidOf(0, day("03:30:00.000")), voidOf(1, day("03:40:00.000")), voidOf(2, day("23:00:00.000"))]);

    await sealSpinRollups(database.db, { now: day("04:05:00.000") });
    await sealUntil(day("04:06:00.000"), day("04:00:00.000"));
    const sealed = await database.db
      .select()
      .from(spinHourlyTotals)
      .where(and(eq(spinHourlyTotals.partnerId, voider.partnerId), eq(spinHourlyTotals.hour, day("03:00:00.000"))))
      .orderBy(spinHourlyTotals.gameId);
    expect(
      sealed.map((row) => [row.totalSpins, row.voidedSpins, row.voidedWageredMicros, row.voidedPaidMicros]),
    ).toEqual([
      [0, 1, 2_000_000n, 10_000_000n],
      [2, 1, 3_000_000n, 0n],
    ]);

    const owner = { partnerId: voider.partnerId, environment: "sandbox" as const, reportDate: "2026-03-11" };
    const fromRollups = await computeReportFigures(database.db, owner);
    expect(fromRollups).toEqual(await computeReportFigures(database.db, owner, "spins"));
    expect(fromRollups).toMatchObject({
      totalSpins: 2,
      totalWageredMicros: 8_000_000n,
      totalPaidMicros: 0n,
      voidedSpins: 3,
      voidedWageredMicros: 10_000_000n,
      voidedPaidMicros: 10_000_000n,
    });
    expect(fromRollups.games.map((game) => [game.gameId, game.totalSpins, game.voidedSpins])).toEqual([
      [voider.gameIds[0], 0, 1],
      [voider.gameIds[1], 2, 2],
    ]);
    // The 10th counts its spin, not the void made on the 11th.
    expect(await computeReportFigures(database.db, { ...owner, reportDate: "2026-03-10" })).toMatchObject({
      totalSpins: 1,
      voidedSpins: 0,
    });

    // A void of a sealed hour removed behind the roll-ups' back: only the record's path misses it.
    await database.db.delete(spinVoids).where(eq(spinVoids.spinId, ids[0]!.id));
    expect((await computeReportFigures(database.db, owner)).voidedSpins).toBe(3);
    expect((await computeReportFigures(database.db, owner, "spins")).voidedSpins).toBe(2);
  });
});

describe("free rounds in the roll-ups (CONTRACT §14)", () => {
  it("moves free-round wagers out of the wagered sum into their own, the same from the roll-ups as from the spins", async () => {
    const granter = await createSpinFixture(database.db, { environment: "sandbox", games: 1 });
    const day = (time: string) => new Date(`2026-03-12T${time}Z`);
    const spun = [
      { gameId: granter.gameIds[0]!, wagerMicros: 3_000_000, payoutMicros: 30_000_000, createdAt: day("05:10:00.000") },
      { gameId: granter.gameIds[0]!, wagerMicros: 3_000_000, payoutMicros: 0, createdAt: day("05:20:00.000") },
      { gameId: granter.gameIds[0]!, wagerMicros: 5_000_000, payoutMicros: 5_000_000, createdAt: day("05:30:00.000") },
    ];
    const ids = await insertInOrder(granter, spun);
    // The first two used free rounds of a grant at 3 USD (fixture rows: the spin path writes these with the spin).
    await database.db.insert(freeRoundSpins).values(
      [0, 1].map((index) => ({
        spinId: ids[index]!.id,
        grantId: "fr_fixture",
        partnerId: granter.partnerId,
        environment: "sandbox" as const,
        gameId: spun[index]!.gameId,
        externalPlayerId: "fixture-player",
        wagerMicros: spun[index]!.wagerMicros,
        payoutMicros: spun[index]!.payoutMicros,
        roundsLeft: 1 - index,
        createdAt: ids[index]!.createdAt,
      })),
    );

    await sealSpinRollups(database.db, { now: day("06:05:00.000") });
    await sealUntil(day("06:06:00.000"), day("06:00:00.000"));
    const [sealed] = await database.db
      .select()
      .from(spinHourlyTotals)
      .where(and(eq(spinHourlyTotals.partnerId, granter.partnerId), eq(spinHourlyTotals.hour, day("05:00:00.000"))));
    expect(sealed).toMatchObject({
      totalSpins: 3,
      totalWageredMicros: 5_000_000n,
      totalPaidMicros: 35_000_000n,
      freeRoundSpins: 2,
      freeRoundWagerMicros: 6_000_000n,
    });

    const owner = { partnerId: granter.partnerId, environment: "sandbox" as const, reportDate: "2026-03-12" };
    const fromRollups = await computeReportFigures(database.db, owner);
    expect(fromRollups).toEqual(await computeReportFigures(database.db, owner, "spins"));
    expect(fromRollups).toMatchObject({
      totalSpins: 3,
      totalWageredMicros: 5_000_000n,
      totalPaidMicros: 35_000_000n,
      freeRoundSpins: 2,
      freeRoundWagerMicros: 6_000_000n,
    });
  });
});
