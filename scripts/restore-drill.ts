/**
 * The restore drill's steps (docs/runbook.md, "Backup and restore"): back Postgres up with pg_dump,
 * lose the database, restore it with pg_restore, and read the ledger to compare before and after.
 * Redis needs no backup: after a loss the blocks worker rebuilds each game's outcome list from
 * Postgres (packages/blocks/src/recovery.ts). `scripts/restore-drill.test.ts` runs the whole drill
 * (`npm run drill:restore`); operators run the same commands on a copy of production.
 */
import { execFileSync } from "node:child_process";
import postgres from "postgres";

/** The database a URL names, and a URL of the server's maintenance database (`postgres`) to drop and create it from. */
function split(databaseUrl: string): { name: string; adminUrl: string } {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.slice(1));
  url.pathname = "/postgres";
  return { name, adminUrl: url.toString() };
}

const quoted = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** pg_dump's custom format: compressed, restored table by table, indexes built after the data. */
export function backUp(databaseUrl: string, file: string): void {
  execFileSync("pg_dump", ["--format=custom", "--no-owner", `--file=${file}`, `--dbname=${databaseUrl}`]);
}

/** The disaster: the database is gone (every session of it ended first). */
export async function dropDatabase(databaseUrl: string): Promise<void> {
  const { name, adminUrl } = split(databaseUrl);
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`drop database if exists ${quoted(name)} with (force)`);
  } finally {
    await admin.end();
  }
}

/** A new, empty database of the same name, then the backup restored into it. */
export async function restore(databaseUrl: string, file: string): Promise<void> {
  const { name, adminUrl } = split(databaseUrl);
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`create database ${quoted(name)}`);
  } finally {
    await admin.end();
  }
  execFileSync("pg_restore", ["--no-owner", "--exit-on-error", `--dbname=${databaseUrl}`, file]);
}

/** The major versions of pg_dump and of the server: a dump needs a pg_dump at least as new as the server. */
export async function pgDumpFits(databaseUrl: string): Promise<string | undefined> {
  let client: string;
  try {
    client = execFileSync("pg_dump", ["--version"], { encoding: "utf8" });
  } catch {
    return "pg_dump is not installed";
  }
  const sql = postgres(databaseUrl, { max: 1 });
  try {
    const [row] = await sql<{ server_version_num: string }[]>`show server_version_num`;
    const server = Math.floor(Number(row!.server_version_num) / 10_000);
    const dump = Number(/(\d+)\.\d+/.exec(client)?.[1]);
    return dump >= server ? undefined : `pg_dump ${dump} cannot dump a PostgreSQL ${server} server`;
  } finally {
    await sql.end();
  }
}

export type Ledger = Record<
  "players" | "reports" | "spins" | "voids" | "usedOutcomes" | "events" | "idempotencyKeys" | "deliveries" | "blocks",
  unknown[]
>;

/**
 * Everything the money and the record depend on, read the same way before and after: every player's
 * figures, every settlement report as stored, the spins, voids, outcomes used, events, idempotency
 * records and deliveries (by id), and the blocks' commitments.
 */
export async function readLedger(databaseUrl: string): Promise<Ledger> {
  const sql = postgres(databaseUrl, { max: 1 });
  try {
    const rows = (query: string) => sql.unsafe(query).then((result) => [...result]);
    return {
      players: await rows(
        "select id, external_id, balance_micros::text, total_spins, total_wagered_micros::text, total_paid_micros::text from players order by id",
      ),
      reports: await rows(
        "select to_jsonb(r) - 'id' as report from settlement_reports r order by report_date, partner_id",
      ),
      spins: await rows("select id, balance_after_micros::text, payout_micros::text from spins order by id"),
      voids: await rows("select spin_id, voided_at from spin_voids order by spin_id"),
      usedOutcomes: await rows("select block_id, outcome_index from spin_outcomes order by 1, 2"),
      events: await rows("select id, sequence, type from events order by sequence, id"),
      idempotencyKeys: await rows("select key, response_body from idempotency_keys order by key"),
      deliveries: await rows("select id, status, attempts from webhook_deliveries order by id"),
      blocks: await rows("select id, merkle_root, seed_hash, status from blocks order by id"),
    };
  } finally {
    await sql.end();
  }
}
