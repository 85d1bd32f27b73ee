import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { utcDayBounds } from "@outcomes/core";
import { migrateDatabase } from "@outcomes/db";
import postgres from "postgres";

/**
 * `npx tsx scripts/seed-spins.ts [--rows 10000000] [--date 2026-01-15] [--noise-rows 1000000] [--void-every 100]`
 *
 * Creates a throwaway database (`outcomes_bench_settlement` beside DATABASE_URL, or
 * `--database-url`), migrates it, and fills `spins` for one partner's production environment
 * on one UTC day with `INSERT … SELECT generate_series` in chunks (all indexes in place, as in
 * production). Noise rows of another partner the same day and of this partner the days around it
 * make the day a range inside a larger index. One spin in `--void-every` of the day (default 100)
 * is voided 10 minutes after it (a row of `spin_voids`; the last ones fall on the next day). Then
 * VACUUM ANALYZE: the visibility map lets the settlement aggregate run as an index-only scan
 * (autovacuum does the same for insert-only tables).
 */
export const BENCH_PARTNER_SLUG = "bench-settlement";
const BENCH_DATABASE = "outcomes_bench_settlement";
const NOISE_PARTNER_SLUG = "bench-settlement-noise";
const CHUNK = 1_000_000;
const DAY_MS = 24 * 3600 * 1000;

export interface SeedOptions {
  databaseUrl: string;
  rows: number;
  reportDate: string;
  noiseRows: number;
  games: number;
  players: number;
  /** One spin of the day in this many is voided (0: none). */
  voidEvery: number;
  log: (line: string) => void;
}

export function benchDatabaseUrl(): string {
  const url = new URL(process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/outcomes");
  url.pathname = `/${BENCH_DATABASE}`;
  return url.toString();
}

export async function dropDatabase(databaseUrl: string): Promise<void> {
  const admin = new URL(databaseUrl);
  const name = decodeURIComponent(admin.pathname.slice(1));
  admin.pathname = "/postgres";
  const sql = postgres(admin.toString(), { max: 1, onnotice: () => {} });
  try {
    await sql.unsafe(`drop database if exists "${name.replaceAll('"', '""')}" with (force)`);
  } finally {
    await sql.end();
  }
}

/** Seeds a fresh database; returns the partner whose day is to be settled. */
export async function seedSpins(options: SeedOptions): Promise<{ partnerId: string }> {
  await dropDatabase(options.databaseUrl);
  await migrateDatabase(options.databaseUrl);
  const sql = postgres(options.databaseUrl, { max: 1, onnotice: () => {} });
  try {
    const partnerId = await seedOwner(sql, BENCH_PARTNER_SLUG, options);
    const noisePartnerId = await seedOwner(sql, NOISE_PARTNER_SLUG, options);
    const { start } = utcDayBounds(options.reportDate);
    // The day and the days around it are in the past: their partitions are made here.
    await sql`select ensure_time_partitions('spins', 'day', ${new Date(start.getTime() - DAY_MS).toISOString()},
      ${new Date(start.getTime() + 2 * DAY_MS).toISOString()})`;
    const started = performance.now();
    await insertSpins(sql, options, { partnerId, from: start, rows: options.rows });
    const noise = Math.floor(options.noiseRows / 3);
    await insertSpins(sql, options, { partnerId: noisePartnerId, from: start, rows: noise });
    await insertSpins(sql, options, { partnerId, from: new Date(start.getTime() - DAY_MS), rows: noise });
    await insertSpins(sql, options, { partnerId, from: new Date(start.getTime() + DAY_MS), rows: noise });
    if (options.voidEvery > 0) await insertVoids(sql, options, partnerId);
    options.log(`inserted in ${seconds(started)} s; vacuum analyze, checkpoint …`);
    const vacuumed = performance.now();
    await sql`vacuum analyze spins`;
    await sql`vacuum analyze spin_voids`;
    // The day is settled hours after its spins were written: their pages are long flushed by then.
    await sql`checkpoint`;
    options.log(`vacuum analyze and checkpoint in ${seconds(vacuumed)} s`);
    return { partnerId };
  } finally {
    await sql.end();
  }
}

/** A partner with an active sheet, games, players and one block whose outcome indexes the spins use. */
async function seedOwner(sql: postgres.Sql, slug: string, options: SeedOptions): Promise<string> {
  const partnerId = `ptr_${slug.replaceAll("-", "_")}`;
  const parSheetId = `par_${slug.replaceAll("-", "_")}`;
  await sql`insert into partners (id, slug, name) values (${partnerId}, ${slug}, ${slug})`;
  await sql`insert into par_sheets (id, partner_id, environment, name, version, status, draw_mode, document,
      rtp, certified_rtp, hit_frequency, volatility)
    values (${parSheetId}, ${partnerId}, 'production', 'Bench sheet', '1', 'ACTIVE', 'independent', '{}',
      '0.95', '0.95', 0.3, 2.1)`;
  await sql`insert into games (partner_id, environment, par_sheet_id, name, max_wager_micros, created_at)
    select ${partnerId}, 'production', ${parSheetId}, 'Bench game ' || g, 100000000, '2000-01-01'
    from generate_series(1, ${options.games}::int) g`;
  await sql`insert into players (partner_id, environment, external_id)
    select ${partnerId}, 'production', 'player-' || p from generate_series(1, ${options.players}::int) p`;
  return partnerId;
}

/**
 * Spins spread evenly over 24 h from `from`, cycling through the owner's games and players; wagers
 * of 0.10..5.00 USD with odd micro-amounts, a third of them paying 2.5× (payout floored, as spins do).
 */
async function insertSpins(
  sql: postgres.Sql,
  options: SeedOptions,
  target: { partnerId: string; from: Date; rows: number },
) {
  const [owner] = await sql<[{ game: number; player: number; games: number }]>`
    select min(g.id)::int as game, (select min(id) from players where partner_id = ${target.partnerId})::int as player,
      count(*)::int as games
    from games g where g.partner_id = ${target.partnerId}`;
  const [block] = await sql<[{ id: number }]>`
    insert into blocks (game_id, sequence, size, entries, commitment, status)
    values (${owner.game}, (select coalesce(max(sequence), 0) + 1 from blocks where game_id = ${owner.game}),
      ${target.rows}, '[]', 'bench', 'exhausted')
    returning id::int`;
  const stepMs = DAY_MS / Math.max(target.rows, 1);
  for (let offset = 0; offset < target.rows; offset += CHUNK) {
    const last = Math.min(offset + CHUNK, target.rows) - 1;
    const started = performance.now();
    await sql`
      insert into spins (id, partner_id, environment, game_id, player_id, block_id, outcome_index, prize_tier,
        multiplier_millionths, wager_micros, payout_micros, balance_after_micros, presentation, created_at)
      select 'spn_bench_' || ${block.id}::bigint || '_' || lpad(i::text, 10, '0'), ${target.partnerId}, 'production',
        ${owner.game}::int + (i % ${owner.games}::int), ${owner.player}::bigint + (i % ${options.players}::int),
        ${block.id}::bigint, i, w.tier, w.multiplier, w.wager, w.wager * w.multiplier / 1000000, 0,
        '{"comboString":"A-B-C","reelSymbols":[["K","A","Q"],["J","B","K"],["Q","C","J"]],"animationHints":{"winLine":null,"celebration":"none","highlight":[[false,false,false],[false,false,false],[false,false,false]]}}'::jsonb,
        ${target.from.toISOString()}::timestamptz + (i * ${stepMs}::float8) * interval '1 millisecond'
      from generate_series(${offset}::bigint, ${last}::bigint) i,
      lateral (select 100000 + (i * 7919) % 4900001 as wager,
        case when i % 3 = 0 then 'T1' else 'T0' end as tier,
        case when i % 3 = 0 then 2500000 else 0 end as multiplier) w`;
    options.log(`  ${target.partnerId}: ${last + 1}/${target.rows} rows (${seconds(started)} s)`);
  }
}

/** Voids of one spin of the day in `voidEvery`, each made 10 minutes after its spin. */
async function insertVoids(sql: postgres.Sql, options: SeedOptions, partnerId: string) {
  const { start, end } = utcDayBounds(options.reportDate);
  const started = performance.now();
  const inserted = await sql`
    insert into spin_voids (spin_id, partner_id, environment, game_id, player_id, spin_created_at, block_id,
      outcome_index, prize_tier, wager_micros, payout_micros, reason, voided_at)
    select id, partner_id, environment, game_id, player_id, created_at, block_id, outcome_index, prize_tier,
      wager_micros, payout_micros, 'bench', created_at + interval '10 minutes'
    from spins
    where partner_id = ${partnerId} and created_at >= ${start.toISOString()}::timestamptz
      and created_at < ${end.toISOString()}::timestamptz and outcome_index % ${options.voidEvery}::int = 0`;
  options.log(`  ${partnerId}: ${inserted.count} voids (${seconds(started)} s)`);
}

export const seconds = (since: number) => ((performance.now() - since) / 1000).toFixed(2);

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const { values } = parseArgs({
    options: {
      "database-url": { type: "string" },
      rows: { type: "string", default: "10000000" },
      date: { type: "string", default: "2026-01-15" },
      "noise-rows": { type: "string", default: "1000000" },
      games: { type: "string", default: "8" },
      players: { type: "string", default: "1000" },
      "void-every": { type: "string", default: "100" },
    },
  });
  const databaseUrl = values["database-url"] ?? benchDatabaseUrl();
  const started = performance.now();
  const { partnerId } = await seedSpins({
    databaseUrl,
    rows: Number(values.rows),
    reportDate: values.date,
    noiseRows: Number(values["noise-rows"]),
    games: Number(values.games),
    players: Number(values.players),
    voidEvery: Number(values["void-every"]),
    log: (line) => console.log(line),
  });
  console.log(
    `seeded ${values.rows} spins of ${partnerId} on ${values.date} in ${seconds(started)} s (${databaseUrl})`,
  );
  console.log("measure: npx tsx scripts/bench-settlement.ts --keep-seed; drop: add --drop-only");
}
