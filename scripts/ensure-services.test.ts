import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "@outcomes/testkit/ports";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

/**
 * scripts/ensure-services.sh's decisions, run with a PATH of fakes: the machine's Postgres and Redis
 * are never stopped or started. The fakes record their calls; a server fake marks its service up.
 */
const SCRIPT = fileURLToPath(new URL("ensure-services.sh", import.meta.url));
const which = (tool: string) => execFileSync("bash", ["-c", `command -v ${tool}`], { encoding: "utf8" }).trim();
const BASH = which("bash");

const FAKES: Record<string, string> = {
  pg_isready: '[ -e "$STATE/postgres.up" ]',
  "redis-cli": '[ -e "$STATE/redis.up" ] && echo PONG',
  pg_lsclusters: 'echo "17 main 5432 down postgres /var/lib/postgresql/17/main /var/log/postgresql/17.log"',
  pg_ctlcluster: 'touch "$STATE/postgres.up"',
  "redis-server": 'touch "$STATE/redis.up"',
  // Docker runs; no container exists yet; `exec` is the container's readiness probe.
  docker: '[ "$1" = container ] && exit 1; exit 0',
};

let dir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "ensure-services-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Runs the script with only `bash`, `sleep`, `touch` and the named fakes on PATH. */
function run(fakes: string[], env: Record<string, string> = {}, args: string[] = []) {
  for (const tool of ["bash", "sleep", "touch"]) symlinkSync(which(tool), join(dir, tool));
  for (const tool of fakes) {
    writeFileSync(join(dir, tool), `#!${BASH}\necho "${tool} $*" >> "$STATE/calls"\n${FAKES[tool]}\n`, { mode: 0o755 });
  }
  const result = spawnSync(BASH, [SCRIPT, ...args], {
    env: { PATH: dir, STATE: dir, ...env },
    encoding: "utf8",
    timeout: 15_000,
  });
  let calls: string[] = [];
  try {
    calls = readFileSync(join(dir, "calls"), "utf8").trim().split("\n");
  } catch {
    // no fake was called
  }
  return { status: result.status, stdout: result.stdout, stderr: result.stderr, calls };
}

describe("scripts/ensure-services.sh", () => {
  it("starts the machine's Postgres and Redis when they are installed but down", () => {
    const result = run(["pg_isready", "redis-cli", "pg_lsclusters", "pg_ctlcluster", "redis-server"]);
    expect(result.status).toBe(0);
    expect(result.calls.filter((call) => !call.startsWith("pg_isready") && !call.startsWith("redis-cli"))).toEqual([
      "pg_lsclusters -h",
      "pg_ctlcluster --skip-systemctl-redirect 17 main start",
      "redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save  --appendonly no",
    ]);
  });

  it("with --tests, prints the URLs of the machine's services for the tests to use", () => {
    const result = run(["pg_isready", "redis-cli", "pg_lsclusters", "pg_ctlcluster", "redis-server"], {}, ["--tests"]);
    expect(result.status).toBe(0);
    expect(result.stdout).toBe(
      "export DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres\nexport REDIS_URL=redis://127.0.0.1:6379\n",
    );
  });

  it("leaves Redis alone when the processes use a Redis Cluster (REDIS_CLUSTER_NODES)", () => {
    const result = run(["pg_isready", "redis-cli", "pg_lsclusters", "pg_ctlcluster", "redis-server"], {
      REDIS_CLUSTER_NODES: "10.0.0.11:6379,10.0.0.12:6379",
    });
    expect(result.status).toBe(0);
    expect(result.calls.some((call) => call.startsWith("redis"))).toBe(false);
    expect(result.calls).toContain("pg_ctlcluster --skip-systemctl-redirect 17 main start");
  });

  it("leaves services on another host alone, even when they do not answer", () => {
    const result = run(["pg_isready", "redis-cli", "pg_lsclusters", "pg_ctlcluster", "redis-server", "docker"], {
      DATABASE_URL: "postgres://app:secret@db.internal:5432/outcomes",
      REDIS_URL: "redis://cache.internal:6379",
    });
    expect(result).toMatchObject({ status: 0, calls: [] });
  });

  it("with neither a local server nor Docker: one line on how to get it, exit 1", async () => {
    const port = await freePort();
    const result = run([], { DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/outcomes` });
    console.log(`ensure-services without Postgres or Docker: exit ${result.status}, ${result.stderr}`);
    expect(result.status).toBe(1);
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
    expect(result.stderr).toContain(`Postgres is not answering on 127.0.0.1:${port}`);
    expect(result.stderr).toMatch(/install and start Postgres.*install Docker.*set DATABASE_URL/);
  });

  it("with Docker only: npm start runs containers on the configured ports", () => {
    const result = run(["pg_isready", "redis-cli", "docker"], {
      DATABASE_URL: "postgres://postgres@localhost:5544/outcomes",
    });
    expect(result.status).toBe(0);
    expect(result.calls.filter((call) => call.startsWith("docker run"))).toEqual([
      "docker run -d --name outcomes-postgres -p 127.0.0.1:5544:5432 -e POSTGRES_HOST_AUTH_METHOD=trust postgres:17",
      "docker run -d --name outcomes-redis -p 127.0.0.1:6379:6379 redis:7.4",
    ]);
  });

  it("with Docker only: npm test leaves unset URLs to testcontainers and starts nothing", () => {
    const result = run(["pg_isready", "redis-cli", "docker"], {}, ["--tests"]);
    expect(result.status).toBe(0);
    expect(result.stdout).toBe("");
    expect(result.calls.filter((call) => call.startsWith("docker") && call !== "docker info")).toEqual([]);
  });
});
