import { once } from "node:events";
import { createServer } from "node:net";
import { freePort } from "@outcomes/testkit/ports";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runApiToExit } from "./harness/processes.js";
import { Stack } from "./harness/stack.js";

let stack: Stack;

beforeAll(async () => {
  stack = await Stack.create();
});
afterAll(async () => {
  await stack?.close();
});

describe("two processes of one host on one port", () => {
  it("a second worker on a taken WORKER_METRICS_PORT serves its metrics on a free port, warns, and both keep working", async () => {
    const port = await freePort();
    const env = { WORKER_METRICS_PORT: String(port) };
    const first = await stack.startWorker("worker-a", ["key-expiry"], env);
    const second = await stack.startWorker("worker-b", ["key-expiry"], env);

    const warnings = second.linesWith("WORKER_METRICS_PORT").map((line) => JSON.parse(line));
    console.log(
      `FAULT port-conflict/worker: two workers with WORKER_METRICS_PORT=${port}\n  second: ${warnings[0]?.msg}`,
    );
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ level: 40, takenPort: port });
    const fallback = warnings[0].port as number;
    expect(fallback).not.toBe(port);
    for (const metricsPort of [port, fallback]) {
      expect((await fetch(`http://127.0.0.1:${metricsPort}/healthz`)).status).toBe(200);
    }
    expect(first.running && second.running).toBe(true);
  });

  it("an API on a taken PORT stops with one line naming PORT and exit status 1, no stack trace", async () => {
    const holder = createServer().listen(Number(stack.env.PORT));
    await once(holder, "listening");
    try {
      const { code, output } = await runApiToExit(stack.env);
      const lines = output.split("\n").filter((line) => line.includes("PORT"));
      console.log(
        `FAULT port-conflict/api: PORT ${stack.env.PORT} held by another process\n  exit ${code}: ${lines[0]}`,
      );
      expect(code).toBe(1);
      expect(lines).toHaveLength(1);
      expect(JSON.parse(lines[0] ?? "{}")).toMatchObject({ level: 60, port: Number(stack.env.PORT) });
      expect(output).not.toMatch(/"stack"|^\s+at /m);
    } finally {
      holder.close();
    }
  });
});
