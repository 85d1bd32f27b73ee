import { readFileSync } from "node:fs";
import { freePort } from "@outcomes/testkit/ports";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createWorld, type World, waitForReserve } from "./harness/http.js";
import { childrenOf, eventually, runApiToExit, ServiceProcess, sleep } from "./harness/processes.js";
import { Stack } from "./harness/stack.js";

let stack: Stack;
let world: World;
let primary: ServiceProcess;
/** The primary's API_METRICS_PORT, which answers for both API processes. */
let metricsPort: number;

/** Sum of `outcomes_spins_total` over every label set in one scrape. */
async function scrapedSpins(): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  return text
    .split("\n")
    .filter((line) => line.startsWith("outcomes_spins_total{"))
    .reduce((sum, line) => sum + Number(line.split(" ").at(-1)), 0);
}

async function spins(count: number, clients: number): Promise<number[]> {
  const statuses: number[] = [];
  await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      for (let n = client; n < count; n += clients) {
        const answer = await stack.api
          .call("POST", "/api/partner/v1/spins", {
            apiKey: world.apiKey,
            json: { gameId: world.gameId, playerId: `web-${n % 10}`, wagerUsd: 1 },
            retryIdleReset: false,
          })
          .catch(() => ({ status: 0 })); // a network failure: the socket's process was killed
        statuses.push(answer.status);
      }
    }),
  );
  return statuses;
}

beforeAll(async () => {
  stack = await Stack.create({ env: { WEB_CONCURRENCY: "2" } });
  await stack.startWorker("worker-blocks", ["blocks"]);
  metricsPort = await freePort();
  primary = ServiceProcess.api("api-primary", { ...stack.env, API_METRICS_PORT: String(metricsPort) });
  stack.processes.push(primary);
  await primary.start("api processes listening");
  world = await createWorld(stack.api);
  await waitForReserve(stack.api, world.gameId, 2);
});
afterAll(async () => {
  await stack?.close();
});

describe("WEB_CONCURRENCY=2: two API processes on one port", () => {
  it("serves spins from both processes, and one /metrics scrape counts every spin of both", async () => {
    const apiProcesses = childrenOf(primary.pid!);
    expect(apiProcesses).toHaveLength(2);

    const statuses = await spins(200, 8);
    expect(statuses.filter((status) => status === 200)).toHaveLength(200);
    // Connections go round-robin: a process that saw only its own spins would report about half.
    const scrapes = [await scrapedSpins(), await scrapedSpins(), await scrapedSpins(), await scrapedSpins()];
    console.log(`FAULT web-concurrency: api processes ${apiProcesses.join(",")}; 200 spins; scrapes ${scrapes}`);
    expect(scrapes).toEqual([200, 200, 200, 200]);
    // Without TRUSTED_PROXIES: one warning for the port, from the primary, not one per process.
    const warnings = primary.linesWith("TRUSTED_PROXIES is unset");
    expect(warnings).toHaveLength(1);
    expect(JSON.parse(warnings[0]!)).toMatchObject({ level: 40, name: "api-primary" });
  });

  it("replaces an API process killed with SIGKILL while the other keeps serving", async () => {
    const [victim, survivor] = childrenOf(primary.pid!);
    process.kill(victim!, "SIGKILL");
    const during = await spins(40, 4);
    const replaced = await eventually(
      () => {
        const now = childrenOf(primary.pid!);
        return now.length === 2 && !now.includes(victim!) && now;
      },
      20_000,
      "a replacement API process",
    );
    await eventually(() => primary.linesWith('"api listening"').length >= 3, 20_000, "the replacement to listen");
    const after = await spins(40, 4);
    console.log(
      `FAULT web-concurrency/kill: killed ${victim}, survivor ${survivor}, now ${replaced}; during ${JSON.stringify(
        count(during),
      )}, after ${JSON.stringify(count(after))}`,
    );
    expect(replaced).toContain(survivor);
    // Requests on the killed process's sockets may fail at the network; none is answered wrongly.
    expect(during.filter((status) => status !== 200 && status !== 0)).toEqual([]);
    expect(after).toEqual(Array(40).fill(200));
    expect(primary.linesWith("an api process died")).toHaveLength(1);
  });

  it("stops every API process gracefully on SIGTERM to the primary, exit status 0", async () => {
    const apiProcesses = childrenOf(primary.pid!);
    const started = Date.now();
    await primary.kill("SIGTERM");
    const gone = (pid: number) => {
      try {
        process.kill(pid, 0);
        return false;
      } catch {
        return true;
      }
    };
    expect(apiProcesses.every(gone)).toBe(true);
    expect(primary.exitCode).toBe(0);
    expect(primary.linesWith('"component":"http server"').length).toBeGreaterThanOrEqual(2);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it("stops with exit status 1 when its API processes cannot take the port", async () => {
    const holder = ServiceProcess.api("api-holder", { ...stack.env, WEB_CONCURRENCY: "1" });
    stack.processes.push(holder);
    await holder.start("api listening");
    // A single API process warns about TRUSTED_PROXIES itself.
    expect(holder.linesWith("TRUSTED_PROXIES is unset").map((line) => JSON.parse(line).name)).toEqual(["api"]);
    const { code, output } = await runApiToExit(stack.env);
    const lines = output.split("\n");
    console.log(`FAULT web-concurrency/port: exit ${code}; ${lines.filter((line) => line.includes("PORT"))[0]}`);
    expect(code).toBe(1);
    expect(lines.filter((line) => line.includes("could not start"))).toHaveLength(1);
    // The API process that met the taken port says why in one line naming PORT; no stack trace.
    expect(lines.filter((line) => line.includes("PORT")).length).toBeGreaterThanOrEqual(1);
    expect(output).not.toMatch(/"stack"|^\s+at /m);
  });

  it("backs off between replacements of API processes that die right after they listen, then stops with exit 1 naming the cause", async () => {
    // The cause is outside the process, as the OOM killer's or an operator's would be: SIGKILL to each
    // API process 200 ms after it logs that it listens (by then the primary has its `listening`, or
    // it would count as a process that could not start).
    const env = { ...stack.env, PORT: String(await freePort()), WEB_CONCURRENCY: "2", TRUSTED_PROXIES: "10.0.0.0/8" };
    const looping = ServiceProcess.api("api-crash-loop", env);
    stack.processes.push(looping);
    await looping.start("api processes listening");
    const started = Date.now();
    const initial = childrenOf(looping.pid);
    const cpuAtStart = cpuTicks(looping.pid!);
    let cpu = cpuAtStart;
    const firstSeen = new Map<number, number>();
    const killed = new Set<number>();
    while (looping.running && Date.now() - started < 90_000) {
      for (const pid of childrenOf(looping.pid)) if (!firstSeen.has(pid)) firstSeen.set(pid, Date.now());
      for (const line of looping.linesWith('"msg":"api listening"')) {
        const { pid, time } = JSON.parse(line) as { pid: number; time: number };
        if (killed.has(pid) || Date.now() - time < 200) continue;
        killed.add(pid);
        process.kill(pid, "SIGKILL");
      }
      cpu = cpuTicks(looping.pid!) ?? cpu;
      await sleep(20);
    }
    const elapsedMs = Date.now() - started;
    const deaths = looping
      .linesWith("an api process died")
      .map((line) => JSON.parse(line) as { time: number; delayMs: number; signal: string });
    const replacements = [...firstSeen].filter(([pid]) => !initial.includes(pid)).map(([, at]) => at);
    const stopLines = looping.linesWith("keep dying");
    const treeCpuSeconds = ((cpu?.tree ?? 0) - (cpuAtStart?.tree ?? 0)) / 100;
    console.log(
      `FAULT web-concurrency/crash-loop: exit ${looping.exitCode} after ${elapsedMs} ms; delays ${deaths.map(
        (death) => death.delayMs,
      )} ms; replacements started ${replacements.map((at, index) => at - deaths[index]!.time)} ms after each death; ` +
        `CPU ${treeCpuSeconds.toFixed(2)} s (primary and its processes), primary alone ${(((cpu?.own ?? 0) - (cpuAtStart?.own ?? 0)) / 100).toFixed(2)} s; ${stopLines[0]}`,
    );

    expect(looping.exitCode).toBe(1);
    expect(elapsedMs).toBeLessThan(60_000);
    expect(deaths.map((death) => [death.delayMs, death.signal])).toEqual([
      [100, "SIGKILL"],
      [200, "SIGKILL"],
      [400, "SIGKILL"],
      [800, "SIGKILL"],
    ]);
    // Each replacement waited out its delay: it was forked no sooner than its delay after the death.
    expect(replacements).toHaveLength(4);
    replacements.forEach((at, index) => {
      expect(at - deaths[index]!.time).toBeGreaterThanOrEqual(deaths[index]!.delayMs);
    });
    expect(stopLines).toHaveLength(1);
    expect(stopLines[0]).toContain("api processes keep dying: 5 within 60 s, the last by signal SIGKILL; stopping");
    expect(childrenOf(looping.pid)).toEqual([]);
    expect(looping.linesWith("TRUSTED_PROXIES")).toEqual([]);
    // The five deaths it counted; on a loaded machine a sixth process (the replacement forked before
    // the fifth death) can reach "listening" and be killed here while the primary is stopping.
    expect(killed.size).toBeGreaterThanOrEqual(5);
    expect(killed.size).toBeLessThanOrEqual(6);
    // The primary itself only waits between its processes' deaths.
    expect(((cpu?.own ?? 0) - (cpuAtStart?.own ?? 0)) / 100).toBeLessThan(1);
  });
});

/**
 * CPU clock ticks (1/100 s) from /proc: the process's own, and with its children that have ended
 * (`tree`); undefined once it is gone.
 */
function cpuTicks(pid: number): { own: number; tree: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const [utime, stime, cutime, cstime] = stat
      .slice(stat.lastIndexOf(")") + 2)
      .split(" ")
      .slice(11, 15)
      .map(Number) as [number, number, number, number];
    return { own: utime + stime, tree: utime + stime + cutime + cstime };
  } catch {
    return undefined;
  }
}

function count(statuses: number[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const status of statuses) counts[status] = (counts[status] ?? 0) + 1;
  return counts;
}
