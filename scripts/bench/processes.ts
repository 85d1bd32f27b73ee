import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { freePort } from "@outcomes/testkit/ports";

/**
 * Starts `node <args>` as its own process with the given env and waits until `readyPath` answers
 * 200. `metricsUrl` is where an API serves `/metrics` (its API_METRICS_PORT, never PORT).
 */
export async function startProcess(
  args: string[],
  env: Record<string, string>,
  readyPath: string,
): Promise<{ child: ChildProcess; url: string; metricsUrl: string }> {
  const entry = args.at(-1);
  const port = await freePort();
  const metricsPort = await freePort();
  const child = spawn(process.execPath, args, {
    env: { ...process.env, ...env, PORT: String(port), API_METRICS_PORT: String(metricsPort) },
    stdio: ["ignore", "inherit", "inherit"],
  });
  const url = `http://127.0.0.1:${port}`;
  const metricsUrl = `http://127.0.0.1:${metricsPort}`;
  for (let tries = 0; tries < 300; tries++) {
    if (child.exitCode !== null) throw new Error(`${entry} exited with ${child.exitCode}`);
    const ok = await fetch(url + readyPath).then(
      (response) => response.ok,
      () => false,
    );
    if (ok) return { child, url, metricsUrl };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${entry} did not become ready`);
}

export { productionNodeArgs } from "@outcomes/testkit/production";

export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill("SIGTERM");
  await once(child, "exit");
}

/** The process's peak resident set (VmHWM) in MB, from /proc; null where there is no /proc. */
export function peakRssMb(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? Math.round(Number(match[1]) / 102.4) / 10 : null;
  } catch {
    return null;
  }
}
