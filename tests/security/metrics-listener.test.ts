import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import {
  createTestDatabase,
  deleteTestKeys,
  requiredEnv,
  type TestDatabase,
  testRedisPrefix,
} from "@outcomes/testkit/databases";
import { parseExposition, sampleValue } from "@outcomes/testkit/metrics";
import { freePort } from "@outcomes/testkit/ports";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * `/metrics` lives on its own listener, `API_METRICS_PORT`, never on the partner port (issue 38,
 * item 3; CONTRACT §1): its reserve gauges, by sequential game id, would show anyone every tenant's
 * spin volume. The real `main.ts`, alone and as a WEB_CONCURRENCY cluster (whose primary answers
 * the port for every process).
 */
const MAIN = fileURLToPath(new URL("../../apps/api/src/main.ts", import.meta.url));

let database: TestDatabase;
const prefixes: string[] = [];
const running: ChildProcess[] = [];
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await Promise.all(running.map(stop));
  for (const prefix of prefixes) await deleteTestKeys(prefix);
  await database?.drop();
});

async function stop(child: ChildProcess) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  await exited;
}

/** The API as production starts it; resolves with its output once every line in `ready` was logged. */
async function startApi(env: Record<string, string>, ready: string[]) {
  const prefix = testRedisPrefix();
  prefixes.push(prefix);
  const child = spawn(process.execPath, ["--import", "tsx", MAIN], {
    env: {
      PATH: process.env.PATH ?? "",
      DATABASE_URL: database.url,
      REDIS_URL: requiredEnv("REDIS_URL"),
      REDIS_PREFIX: prefix,
      LOG_LEVEL: "info",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  running.push(child);
  let output = "";
  await new Promise<void>((resolve, reject) => {
    const collect = (chunk: Buffer) => {
      output += chunk.toString();
      if (ready.every((line) => output.includes(line))) resolve();
    };
    child.stdout?.on("data", collect);
    child.stderr?.on("data", collect);
    child.once("exit", (code) => reject(new Error(`the API exited with ${code}:\n${output}`)));
  });
  return { child, output: () => output };
}

async function scrape(port: number) {
  const response = await fetch(`http://127.0.0.1:${port}/metrics`);
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toContain("text/plain");
  return parseExposition(await response.text());
}

async function expectNoMetricsOn(port: number) {
  const response = await fetch(`http://127.0.0.1:${port}/metrics`);
  const body = (await response.json()) as { errorCode?: string };
  expect([response.status, body.errorCode]).toEqual([404, "KS-4215"]);
}

describe("API_METRICS_PORT", () => {
  it("serves /metrics and /healthz on its own port; the partner port answers /metrics 404 KS-4215", async () => {
    const [port, metricsPort] = [await freePort(), await freePort()];
    const api = await startApi({ PORT: String(port), API_METRICS_PORT: String(metricsPort) }, [
      "api listening",
      "metrics listening",
    ]);
    expect(api.output()).toContain(`"port":${metricsPort},"msg":"metrics listening"`);
    await expectNoMetricsOn(port);
    const samples = await scrape(metricsPort);
    expect(samples.some((sample) => sample.name === "outcomes_process_cpu_user_seconds_total")).toBe(true);
    // The request to the partner port is counted there, as unmatched.
    expect(
      sampleValue(samples, "outcomes_http_request_duration_seconds_count", { route: "unmatched", status: "404" }),
    ).toBe(1);
    expect((await fetch(`http://127.0.0.1:${metricsPort}/healthz`)).status).toBe(200);
    // Nothing of the APIs there.
    expect((await fetch(`http://127.0.0.1:${metricsPort}/api/partner/v1/openapi.json`)).status).toBe(404);
    await stop(api.child);
  });

  it("0 turns it off", async () => {
    const port = await freePort();
    const api = await startApi({ PORT: String(port), API_METRICS_PORT: "0" }, ["api listening"]);
    await expectNoMetricsOn(port);
    expect(api.output()).not.toContain("metrics listening");
    await stop(api.child);
  });

  it("WEB_CONCURRENCY=2: the primary answers it for both processes; neither serves /metrics on the port", {
    timeout: 60_000,
  }, async () => {
    const [port, metricsPort] = [await freePort(), await freePort()];
    const api = await startApi({ PORT: String(port), API_METRICS_PORT: String(metricsPort), WEB_CONCURRENCY: "2" }, [
      "api processes listening",
      "metrics listening",
    ]);
    // Fresh connections go round-robin over the two processes.
    for (let i = 0; i < 6; i++) {
      await fetch(`http://127.0.0.1:${port}/healthz`, { headers: { Connection: "close" } });
      await expectNoMetricsOn(port);
    }
    const samples = await scrape(metricsPort);
    const healthz = { method: "GET", route: "/healthz", status: "200" };
    expect(sampleValue(samples, "outcomes_http_request_duration_seconds_count", healthz)).toBe(6);
    await stop(api.child);
  });
});
