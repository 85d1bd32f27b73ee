import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { EnvError, parseEnv } from "./env.js";

describe("parseEnv", () => {
  it("fills every default of CONTRACT §1", () => {
    const env = parseEnv({});
    expect(env).toMatchObject({
      DATABASE_URL: "postgres://postgres@127.0.0.1:5432/outcomes",
      REDIS_URL: "redis://127.0.0.1:6379",
      PORT: 3000,
      ALLOWED_ENVIRONMENTS: ["sandbox", "production"],
      BLOCK_SIZE: 10_000,
      MIN_READY_BLOCKS: 2,
      TARGET_READY_BLOCKS: 4,
      WEBHOOK_RETRY_DELAYS_MS: [60_000, 300_000, 900_000, 3_600_000],
      WEBHOOK_TIMEOUT_MS: 5_000,
      WEBHOOK_DISABLE_AFTER_HOURS: 120,
      RATE_LIMIT_SPINS_PER_SECOND: 100,
      RATE_LIMIT_REQUESTS_PER_SECOND: 20,
      LARGE_WIN_THRESHOLD_USD: 1000,
      VOID_WINDOW_HOURS: 72,
      SETTLEMENT_CRON: "0 2 * * *",
      KEY_EXPIRY_CRON: "0 * * * *",
      LOG_LEVEL: "info",
    });
    expect(env.ADMIN_TOKEN).toBeUndefined();
  });

  it("reads lists and numbers, and treats an empty value as unset", () => {
    const env = parseEnv({ ALLOWED_ENVIRONMENTS: "sandbox", PORT: "8080", ADMIN_TOKEN: "" });
    expect(env.ALLOWED_ENVIRONMENTS).toEqual(["sandbox"]);
    expect(env.PORT).toBe(8080);
    expect(env.ADMIN_TOKEN).toBeUndefined();
  });

  it.each([
    ["PORT", "eighty"],
    ["PORT", "70000"],
    ["DATABASE_URL", "not a url"],
    ["ALLOWED_ENVIRONMENTS", "sandbox,staging"],
    ["TRUSTED_PROXIES", "10.0.0.0/33"],
    ["TRUSTED_PROXIES", "10.0.0.1,load-balancer"],
    ["RATE_LIMIT_SPINS_PER_SECOND", "0"],
    ["WEBHOOK_RETRY_DELAYS_MS", "1000,2000"],
    ["LOG_LEVEL", "loud"],
    ["ADMIN_TOKEN", "short"],
    ["REDIS_PREFIX", "has space"],
    ["REDIS_CLUSTER_NODES", "127.0.0.1"],
    ["REDIS_CLUSTER_NODES", "127.0.0.1:7000,redis://127.0.0.1:7001"],
    ["REDIS_CLUSTER_NODES", "127.0.0.1:70000"],
    ["LARGE_WIN_THRESHOLD_USD", "1000.1234567"],
    ["LARGE_WIN_THRESHOLD_USD", "-5"],
    ["LARGE_WIN_THRESHOLD_USD", "0"],
    ["LARGE_WIN_THRESHOLD_USD", "1000000000"],
    ["LARGE_WIN_THRESHOLD_USD", "1e400"],
    ["LARGE_WIN_THRESHOLD_USD", "ten"],
    ["LARGE_WIN_THRESHOLD_USD", "0x10"],
    ["PORT", "0x1F90"],
    ["PORT", " "],
    ["BLOCK_SIZE", "1e3"],
    ["MIN_READY_BLOCKS", "2.0"],
    ["WEBHOOK_TIMEOUT_MS", "2147483648"],
    ["WORKER_JOB_LOCK_MS", "99999999999"],
    ["WEBHOOK_RETRY_DELAYS_MS", "1,2,3,4e10"],
    ["SPIN_BATCH_MAX_WAIT_MS", "-0"],
    ["TARGET_READY_BLOCKS", "1"],
    ["VOID_WINDOW_HOURS", "0"],
    ["VOID_WINDOW_HOURS", "721"],
    ["VOID_WINDOW_HOURS", "1.5"],
    ["API_METRICS_PORT", "65536"],
    ["HTTP_MAX_CONNECTIONS", "0"],
    ["HTTP_HEADERS_TIMEOUT_MS", "40000"],
    ["SANDBOX_LOOPBACK_PORTS", "0"],
    ["SANDBOX_LOOPBACK_PORTS", "any"],
    ["SANDBOX_LOOPBACK_PORTS", "3000,none"],
    ["WEBHOOK_DISABLE_AFTER_HOURS", "0"],
    ["WEBHOOK_DISABLE_AFTER_HOURS", "120h"],
  ])("a bad %s (%j) throws an error naming the variable", (name, value) => {
    expect(() => parseEnv({ [name]: value })).toThrow(EnvError);
    expect(() => parseEnv({ [name]: value })).toThrow(new RegExp(`\\b${name}\\b`));
  });

  it("takes LARGE_WIN_THRESHOLD_USD exactly, to the micro-USD, and integers in plain digits", () => {
    expect(parseEnv({ LARGE_WIN_THRESHOLD_USD: " 250.125001 " }).LARGE_WIN_THRESHOLD_USD).toBe(250.125001);
    expect(parseEnv({ LARGE_WIN_THRESHOLD_USD: "999999999.999999" }).LARGE_WIN_THRESHOLD_USD).toBe(999999999.999999);
    expect(parseEnv({ LARGE_WIN_THRESHOLD_USD: "0.000001" }).LARGE_WIN_THRESHOLD_USD).toBe(0.000001);
    const env = parseEnv({ PORT: " 8080 ", WEBHOOK_TIMEOUT_MS: "2147483647", SPIN_BATCH_MAX_WAIT_MS: "0" });
    expect([env.PORT, env.WEBHOOK_TIMEOUT_MS, env.SPIN_BATCH_MAX_WAIT_MS]).toEqual([8080, 2_147_483_647, 0]);
    expect([1, 720].map((hours) => parseEnv({ VOID_WINDOW_HOURS: String(hours) }).VOID_WINDOW_HOURS)).toEqual([1, 720]);
  });

  it("reads REDIS_CLUSTER_NODES as host and port pairs; unset means REDIS_URL alone", () => {
    expect(parseEnv({}).REDIS_CLUSTER_NODES).toBeUndefined();
    expect(
      parseEnv({ REDIS_CLUSTER_NODES: "127.0.0.1:7000, redis-b.internal:7001,[::1]:7002" }).REDIS_CLUSTER_NODES,
    ).toEqual([
      { host: "127.0.0.1", port: 7000 },
      { host: "redis-b.internal", port: 7001 },
      { host: "::1", port: 7002 },
    ]);
  });

  it("reads the HTTP server's limits, the metrics port and the sandbox loopback ports (issue 38)", () => {
    expect(parseEnv({})).toMatchObject({
      API_METRICS_PORT: 9464,
      HTTP_HEADERS_TIMEOUT_MS: 10_000,
      HTTP_REQUEST_TIMEOUT_MS: 30_000,
      HTTP_MAX_CONNECTIONS: 10_000,
    });
    // Unset: any port, as CONTRACT §7 says; `none`: no loopback webhooks at all.
    expect(parseEnv({}).SANDBOX_LOOPBACK_PORTS).toBeUndefined();
    expect(parseEnv({ SANDBOX_LOOPBACK_PORTS: "none" }).SANDBOX_LOOPBACK_PORTS).toEqual([]);
    expect(parseEnv({ SANDBOX_LOOPBACK_PORTS: "3000, 8080" }).SANDBOX_LOOPBACK_PORTS).toEqual([3000, 8080]);
    expect(parseEnv({ API_METRICS_PORT: "0" }).API_METRICS_PORT).toBe(0);
  });

  it("names every bad variable at once", () => {
    expect(() => parseEnv({ PORT: "x", LOG_LEVEL: "loud" })).toThrow(/PORT.*LOG_LEVEL|LOG_LEVEL.*PORT/);
  });
});

describe("loadEnvOrExit", () => {
  it("stops the process with status 1 and a message naming the variable", () => {
    const envModule = fileURLToPath(new URL("./env.ts", import.meta.url));
    const child = spawnSync(
      process.execPath,
      [
        "--import",
        "tsx",
        "--input-type=module",
        "-e",
        `import { loadEnvOrExit } from ${JSON.stringify(envModule)}; loadEnvOrExit(); console.log("started");`,
      ],
      {
        env: { ...process.env, RATE_LIMIT_REQUESTS_PER_SECOND: "-5", LARGE_WIN_THRESHOLD_USD: "0.1234567" },
        encoding: "utf8",
        timeout: 20_000,
      },
    );
    expect(child.status).toBe(1);
    expect(child.stderr).toContain("RATE_LIMIT_REQUESTS_PER_SECOND");
    expect(child.stderr).toContain("LARGE_WIN_THRESHOLD_USD");
    expect(child.stdout).not.toContain("started");
  });
});
