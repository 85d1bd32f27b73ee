import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * pgbench: the machine's own pgbench, else the one of a Debian Postgres install, else Debian's
 * package installed with apt (as root, or through sudo). Null, with the reason, when none can be had.
 */
export function findPgbench(log: (line: string) => void): { path: string } | { unavailable: string } {
  const found = () => {
    try {
      return execFileSync("sh", ["-c", "command -v pgbench"], { encoding: "utf8" }).trim() || null;
    } catch {
      const versions = existsSync("/usr/lib/postgresql") ? readdirSync("/usr/lib/postgresql").sort().reverse() : [];
      const path = versions.map((v) => `/usr/lib/postgresql/${v}/bin/pgbench`).find((p) => existsSync(p));
      return path ?? null;
    }
  };
  const path = found();
  if (path) return { path };
  if (!existsSync("/usr/bin/apt-get")) return { unavailable: "pgbench is not installed and there is no apt-get" };
  log("pgbench missing: installing Debian's postgresql-contrib (apt-get)");
  const sudo = process.getuid?.() === 0 ? [] : ["sudo", "-n"];
  const run = (...args: string[]) => {
    const [command, ...rest] = [...sudo, ...args] as [string, ...string[]];
    execFileSync(command, rest, { stdio: "ignore", env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } });
  };
  try {
    run("apt-get", "update");
    run("apt-get", "install", "-y", "--no-install-recommends", "postgresql-contrib");
  } catch (error) {
    return { unavailable: `installing postgresql-contrib failed: ${(error as Error).message.split("\n")[0]}` };
  }
  const installed = found();
  return installed ? { path: installed } : { unavailable: "postgresql-contrib installed no pgbench" };
}

export interface SpinShape {
  partnerId: string;
  gameId: number;
  blockId: number;
  /** A real spin's `presentation`, so the row is as wide as the service's. */
  presentation: unknown;
}

/** A pgbench script and the variables (`-D`) it reads: values passed as parameters, never as SQL text. */
export interface PgbenchScript {
  text: string;
  variables: Record<string, string>;
}

/**
 * One transaction shaped like a spin, on the service's own tables (same indexes, same foreign keys):
 * upsert the player's balance (one of `players` players) and insert the spin row, each spin its
 * own transaction and commit, prepared.
 */
export function spinShapedScript(shape: SpinShape, players: number): PgbenchScript {
  const variables = { partner: shape.partnerId, presentation: JSON.stringify(shape.presentation) };
  const text = `\\set n random(1, ${players})
BEGIN;
INSERT INTO players AS p (partner_id, environment, external_id, balance_micros, total_spins, total_wagered_micros,
  total_paid_micros, updated_at)
  VALUES (:partner, 'sandbox', 'pgbench-' || :n, -1000000, 1, 1000000, 0, clock_timestamp())
  ON CONFLICT (partner_id, environment, external_id) DO UPDATE SET
    balance_micros = p.balance_micros + excluded.balance_micros, total_spins = p.total_spins + 1,
    total_wagered_micros = p.total_wagered_micros + excluded.total_wagered_micros,
    total_paid_micros = p.total_paid_micros + excluded.total_paid_micros, updated_at = clock_timestamp()
  RETURNING id AS player_id, balance_micros AS balance \\gset
INSERT INTO spins (id, partner_id, environment, game_id, player_id, block_id, outcome_index, forced, prize_tier,
  multiplier_millionths, wager_micros, payout_micros, balance_after_micros, presentation, created_at)
  SELECT 'spn_pgbench_' || i, :partner, 'sandbox', ${shape.gameId}, :player_id, ${shape.blockId}, i, false, 'T0',
    0, 1000000, 0, :balance, (:presentation)::jsonb, clock_timestamp()
  FROM nextval('pgbench_outcome_index') AS i;
END;
`;
  return { text, variables };
}

export interface PgbenchResult {
  clients: number;
  tps: number;
  latencyAverageMs: number;
  transactions: number;
}

/** `pgbench` of the spin-shaped script for `seconds` with `clients` connections (2 threads). */
export async function runPgbench(
  pgbench: string,
  databaseUrl: string,
  script: PgbenchScript,
  clients: number,
  seconds: number,
): Promise<PgbenchResult> {
  const dir = mkdtempSync(join(tmpdir(), "pgbench-"));
  try {
    const file = join(dir, "spin.sql");
    writeFileSync(file, script.text);
    const variables = Object.entries(script.variables).flatMap(([name, value]) => ["-D", `${name}=${value}`]);
    const args = ["-n", "-M", "prepared", "-c", String(clients), "-j", "2", "-T", String(seconds), "-f", file];
    args.push(...variables);
    const child = spawn(pgbench, [...args, databaseUrl], { stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    const number = (pattern: RegExp) => Number(pattern.exec(output)?.[1] ?? Number.NaN);
    const tps = number(/tps = ([\d.]+)/);
    if (code !== 0 || !Number.isFinite(tps)) throw new Error(`pgbench failed (${code}):\n${output}`);
    return {
      clients,
      tps: Math.round(tps),
      latencyAverageMs: number(/latency average = ([\d.]+) ms/),
      transactions: number(/number of transactions actually processed: (\d+)/),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
