import { cpus, loadavg } from "node:os";
import { parseArgs } from "node:util";
import { utcDayBounds } from "@outcomes/core";
import {
  backfillSpinRollups,
  createDatabase,
  type DatabaseClient,
  generateSettlementReport,
  migrateDatabase,
  type ReportKey,
  spinTotalsByGame,
  type TimeRange,
} from "@outcomes/db";
import type postgres from "postgres";
import { BENCH_PARTNER_SLUG, benchDatabaseUrl, dropDatabase, seconds, seedSpins } from "./seed-spins.js";

/**
 * `npx tsx scripts/bench-settlement.ts [--rows 10000000] [--runs 5] [--void-every 100] [--keep-seed] [--reuse]`
 *
 * Seeds `--rows` spins of one partner on one UTC day (scripts/seed-spins.ts), one in `--void-every`
 * of them voided 10 minutes later, then times the
 * generation of that day's report exactly as the worker and the operator route run it
 * (`generateSettlementReport`: aggregate, upsert under the row lock, event), twice over:
 *
 * 1. from the spins (no roll-ups yet: the path of any hour not sealed, and of reissues), printing
 *    the plan of the aggregate;
 * 2. from the hourly roll-ups, after timing the seal of one of the day's hours (the work the
 *    settlements role does each hour) and then sealing the whole seeded range.
 *
 * The first run creates the report; every later run recomputes it and must find it unchanged. The
 * stored figures are checked against a sequential scan that bypasses the index. The database is
 * dropped unless `--keep-seed`; `--reuse` measures an existing seed, `--drop-only` just drops it.
 */
const TARGET_MS = 2000;
const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
const ms = (since: number) => (performance.now() - since).toFixed(0);
const { values } = parseArgs({
  options: {
    "database-url": { type: "string" },
    rows: { type: "string", default: "10000000" },
    date: { type: "string", default: "2026-01-15" },
    "void-every": { type: "string", default: "100" },
    runs: { type: "string", default: "5" },
    "keep-seed": { type: "boolean", default: false },
    reuse: { type: "boolean", default: false },
    "drop-only": { type: "boolean", default: false },
  },
});
const databaseUrl = values["database-url"] ?? benchDatabaseUrl();
const log = (line: string) => console.log(line);

if (values["drop-only"]) {
  await dropDatabase(databaseUrl);
  log(`dropped ${databaseUrl}`);
  process.exit(0);
}

if (values.reuse) {
  await migrateDatabase(databaseUrl);
} else {
  const started = performance.now();
  await seedSpins({
    databaseUrl,
    rows: Number(values.rows),
    reportDate: values.date,
    noiseRows: Math.floor(Number(values.rows) / 10),
    games: 8,
    players: 1000,
    voidEvery: Number(values["void-every"]),
    log,
  });
  log(`seeded in ${seconds(started)} s`);
}

const database = createDatabase(databaseUrl, { max: 2 });
try {
  const [partner] = await database.sql<[{ id: string }]>`select id from partners where slug = ${BENCH_PARTNER_SLUG}`;
  if (!partner) throw new Error("no seeded partner: run without --reuse");
  const key: ReportKey = { partnerId: partner.id, environment: "production", reportDate: values.date };
  const { start, end } = utcDayBounds(values.date);
  await database.sql`delete from spin_rollup_state`;
  await database.sql`delete from settlement_reports`;

  log("\n== from the spins (no roll-ups)");
  await printPlan(database, key, { from: start, to: end });
  const live = await timeRuns(database, key);

  log("\n== from the hourly roll-ups");
  const hour = { from: new Date(start.getTime() + 12 * HOUR_MS), to: new Date(start.getTime() + 13 * HOUR_MS) };
  let started = performance.now();
  await backfillSpinRollups(database.db, hour.from, hour.to);
  log(
    `sealing one hour of the day (~${Math.round(Number(values.rows) / 24)} spins of this partner): ${ms(started)} ms`,
  );
  started = performance.now();
  await backfillSpinRollups(database.db, new Date(start.getTime() - DAY_MS), new Date(end.getTime() + DAY_MS));
  log(`sealing the seeded three days at once: ${ms(started)} ms`);
  const rolled = await timeRuns(database, key);

  await verifyFigures(database.sql, key);
  log(`\none report over ${values.rows} spins of one partner-day (${cpus().length} cores, target ≤ ${TARGET_MS} ms):`);
  log(`  from the roll-ups (a sealed day, as the daily run sees it): ${rolled}`);
  log(`  from the spins (hours not sealed yet, reissues):            ${live}`);
} finally {
  await database.close();
  if (!values["keep-seed"]) {
    await dropDatabase(databaseUrl);
    log(`dropped ${databaseUrl}`);
  }
}

/** Times `--runs` generations; the load average shows what else the machine was doing. */
async function timeRuns(database: DatabaseClient, key: ReportKey): Promise<string> {
  const timings: number[] = [];
  for (let run = 1; run <= Number(values.runs); run++) {
    const started = performance.now();
    const { outcome, report } = await generateSettlementReport(database.db, key, "refuse");
    timings.push(performance.now() - started);
    log(`run ${run}: ${ms(started)} ms (${outcome}; ${report.totalSpins} spins; load ${loadavg()[0]!.toFixed(1)})`);
    if (run > 1 && outcome !== "unchanged") process.exitCode = 1;
  }
  const sorted = [...timings].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)]!;
  return (
    `min ${sorted[0]!.toFixed(0)} ms, median ${median.toFixed(0)} ms, max ${sorted.at(-1)!.toFixed(0)} ms ` +
    `(${median <= TARGET_MS ? "met" : "MISSED"})`
  );
}

/** EXPLAIN ANALYZE of the very statement the service runs, with the session settings it uses. */
async function printPlan(database: DatabaseClient, key: ReportKey, range: TimeRange) {
  const query = spinTotalsByGame(database.db, key, range).toSQL();
  await database.sql.begin(async (tx) => {
    await tx`set local jit = off`;
    const plan = await tx.unsafe(`explain (analyze, buffers) ${query.sql}`, query.params as never[]);
    log(plan.map((row) => row["QUERY PLAN"]).join("\n"));
  });
}

/** The report's totals against a sequential scan of the heap (no index involved). */
async function verifyFigures(sql: postgres.Sql, key: ReportKey) {
  const { start, end } = utcDayBounds(key.reportDate);
  const [expected, report] = await sql.begin(async (tx) => {
    await tx`set local enable_indexscan = off`;
    await tx`set local enable_indexonlyscan = off`;
    await tx`set local enable_bitmapscan = off`;
    const [heap] = await tx<[{ spins: string; wagered: string; paid: string; voids: string }]>`
      select count(*)::text as spins, sum(wager_micros)::text as wagered, sum(payout_micros)::text as paid,
        (select count(*) || '/' || coalesce(sum(wager_micros), 0) || '/' || coalesce(sum(payout_micros), 0)
          from spin_voids where partner_id = ${key.partnerId} and environment = ${key.environment}
          and voided_at >= ${start.toISOString()}::timestamptz and voided_at < ${end.toISOString()}::timestamptz)
          as voids
      from spins where partner_id = ${key.partnerId} and environment = ${key.environment}
        and created_at >= ${start.toISOString()}::timestamptz and created_at < ${end.toISOString()}::timestamptz`;
    const [stored] = await tx<[{ spins: string; wagered: string; paid: string; voids: string }]>`
      select total_spins::text as spins, total_wagered_micros::text as wagered, total_paid_micros::text as paid,
        voided_spins || '/' || voided_wagered_micros || '/' || voided_paid_micros as voids
      from settlement_reports where partner_id = ${key.partnerId} and report_date = ${key.reportDate}`;
    return [heap, stored];
  });
  const same = JSON.stringify(expected) === JSON.stringify(report);
  log(`figures ${same ? "match" : "DIFFER from"} a sequential-scan sum: ${JSON.stringify(report)}`);
  if (!same) process.exitCode = 1;
}
