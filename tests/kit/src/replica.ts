import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { appendFile, chmod, chown, mkdtemp, rm } from "node:fs/promises";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { freePort } from "./ports.js";

const run = promisify(execFile);

/**
 * The machine's Postgres server binaries (`initdb`, `pg_ctl`, `pg_basebackup`): `PG_BIN`, else the
 * newest /usr/lib/postgresql/<version>/bin; null where there are none (Postgres only in Docker).
 */
export function postgresBin(): string | null {
  if (process.env.PG_BIN) return process.env.PG_BIN;
  for (const version of ["17", "16", "15", "14"]) {
    const bin = `/usr/lib/postgresql/${version}/bin`;
    if (existsSync(join(bin, "initdb"))) return bin;
  }
  return null;
}

export interface StreamingPair {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` of each server. */
  primaryUrl: string;
  replicaUrl: string;
  /** Stops both servers and deletes their data. */
  stop: () => Promise<void>;
}

/**
 * A throwaway primary and a streaming hot-standby replica of it, each on a port of its own under a
 * temporary directory: `initdb` (trust auth, replication included), `pg_basebackup -R` for the
 * replica. Postgres refuses to run as root, so as root the binaries run as the `postgres` user.
 * Durability is off (fsync): the data is thrown away.
 */
export async function startStreamingPair(): Promise<StreamingPair> {
  const bin = postgresBin();
  if (!bin) throw new Error("no Postgres binaries found: set PG_BIN to the directory holding initdb and pg_ctl");
  const asRoot = userInfo().uid === 0;
  const pg = (tool: string, args: string[]) =>
    asRoot
      ? run("runuser", ["-u", "postgres", "--", join(bin, tool), ...args], { timeout: 120_000 })
      : run(join(bin, tool), args, { timeout: 120_000 });

  const dir = await mkdtemp(join(tmpdir(), "pg-replica-"));
  if (asRoot) {
    const { stdout } = await run("id", ["-u", "postgres"]);
    const { stdout: gid } = await run("id", ["-g", "postgres"]);
    await chown(dir, Number(stdout.trim()), Number(gid.trim()));
  }
  await chmod(dir, 0o700);
  const primary = join(dir, "primary");
  const replica = join(dir, "replica");
  const [primaryPort, replicaPort] = [await freePort(), await freePort()];
  const started: string[] = [];
  const stop = async () => {
    for (const data of started.reverse()) await pg("pg_ctl", ["-D", data, "-m", "immediate", "stop"]).catch(() => {});
    await rm(dir, { recursive: true, force: true });
  };
  const settings = (port: number) =>
    [
      `port = ${port}`,
      "listen_addresses = '127.0.0.1'",
      `unix_socket_directories = '${dir}'`,
      "wal_level = replica",
      "max_wal_senders = 4",
      "hot_standby = on",
      "fsync = off",
      "synchronous_commit = off",
      "full_page_writes = off",
      "shared_buffers = 32MB",
      "max_connections = 60",
      "",
    ].join("\n");
  try {
    await pg("initdb", ["-D", primary, "-U", "postgres", "--auth=trust", "--no-sync"]);
    await appendFile(join(primary, "postgresql.conf"), settings(primaryPort));
    await pg("pg_ctl", ["-D", primary, "-l", join(dir, "primary.log"), "-w", "start"]);
    started.push(primary);
    await pg("pg_basebackup", ["-h", "127.0.0.1", "-p", String(primaryPort), "-U", "postgres", "-D", replica, "-R"]);
    await appendFile(join(replica, "postgresql.conf"), `port = ${replicaPort}\n`);
    await pg("pg_ctl", ["-D", replica, "-l", join(dir, "replica.log"), "-w", "start"]);
    started.push(replica);
  } catch (error) {
    await stop();
    throw error;
  }
  const url = (port: number) => `postgres://postgres@127.0.0.1:${port}/postgres`;
  return { primaryUrl: url(primaryPort), replicaUrl: url(replicaPort), stop };
}
