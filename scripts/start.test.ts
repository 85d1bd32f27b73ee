import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import {
  createTestDatabase,
  deleteTestKeys,
  requiredEnv,
  type TestDatabase,
  testRedisPrefix,
} from "@outcomes/testkit/databases";
import { freePort } from "@outcomes/testkit/ports";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { eventually } from "../tests/faults/harness/processes.js";

/** `npm start` (scripts/start.sh) as a user runs it, on a database, Redis prefix and port of its own. */
const ROOT = fileURLToPath(new URL("../", import.meta.url));
const ROLES = ["blocks", "settlements", "webhooks", "key-expiry"];

let database: TestDatabase;
let redisPrefix: string;
let script: ChildProcess;
let output = "";
let exited: Promise<[number | null, NodeJS.Signals | null]>;
const pids: Record<string, number> = {};

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
const logLines = () =>
  output
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as { name: string; pid: number; msg: string; role?: string });

beforeEach(async () => {
  database = await createTestDatabase();
  redisPrefix = testRedisPrefix();
  output = "";
  // A group of its own (as a terminal gives `npm start`), so a test can send Ctrl-C to all of it.
  script = spawn("bash", ["scripts/start.sh"], {
    cwd: ROOT,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "",
      DATABASE_URL: database.url,
      REDIS_URL: requiredEnv("REDIS_URL"),
      REDIS_PREFIX: redisPrefix,
      PORT: String(await freePort()),
      WORKER_METRICS_PORT: "0",
      LOG_LEVEL: "info",
    },
  });
  exited = once(script, "exit") as Promise<[number | null, NodeJS.Signals | null]>;
  script.stdout?.on("data", (chunk: Buffer) => (output += chunk));
  script.stderr?.on("data", (chunk: Buffer) => (output += chunk));
  await eventually(
    () => {
      if (script.exitCode !== null) throw new Error(`start.sh exited early:\n${output}`);
      const lines = logLines();
      const api = lines.find((line) => line.name === "api" && line.msg === "api listening");
      const started = lines.filter((line) => line.msg === "role started").map((line) => line.role);
      if (!api || !ROLES.every((role) => started.includes(role))) return false;
      pids.api = api.pid;
      pids.worker = lines.find((line) => line.msg === "role started")?.pid ?? 0;
      return true;
    },
    25_000,
    "the API and every worker role",
  ).catch((error) => {
    throw new Error(`${error.message}\n${output}`);
  });
}, 40_000);

afterEach(async () => {
  // Whatever the script left behind (before the fix: the orphaned API) must not outlive the test.
  for (const pid of [script.pid, ...Object.values(pids)]) if (pid && alive(pid)) process.kill(pid, "SIGKILL");
  await database.drop();
  await deleteTestKeys(redisPrefix);
});

describe("npm start (scripts/start.sh)", () => {
  it("stops the API and exits non-zero when the worker dies", async () => {
    process.kill(pids.worker ?? 0, "SIGKILL");
    const [code] = await exited;
    console.log(`start.sh after the worker's SIGKILL: exit ${code}, API alive: ${alive(pids.api ?? 0)}`);
    expect(code).not.toBe(0);
    expect(alive(pids.api ?? 0)).toBe(false);
  }, 30_000);

  it("on Ctrl-C stops every child once, gracefully, and nothing is left", async () => {
    process.kill(-(script.pid ?? 0), "SIGINT");
    const [code] = await exited;
    const stopping = logLines().filter(
      (line) => line.msg === "shutting down" || line.msg === "second signal, exiting now",
    );
    console.log(
      `start.sh after Ctrl-C: exit ${code}; ${stopping.map((line) => `${line.name}: ${line.msg}`).join("; ")}`,
    );
    expect(code).toBe(130);
    expect(stopping.map((line) => line.msg)).toEqual(["shutting down", "shutting down"]);
    expect(alive(pids.api ?? 0) || alive(pids.worker ?? 0)).toBe(false);
  }, 30_000);
});
