import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { productionNodeArgs } from "@outcomes/testkit/production";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
/**
 * This tree's services as production runs them: the bundles (built once per run, bundles-setup.ts)
 * with the start scripts' node flags. A start costs a third of the CPU of running the sources through
 * tsx (1.3 s against 3 s measured), and these files start dozens of processes one after another.
 */
const API = productionNodeArgs("start:api");
const WORKER = productionNodeArgs("start:worker");

export async function eventually<T>(
  probe: () => Promise<T | false | undefined> | T | false | undefined,
  timeoutMs: number,
  what = "condition",
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const value = await probe();
      if (value) return value;
    } catch {
      // not yet: the thing probed may be down on purpose
    }
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(100);
  }
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * One real service process, its output kept for the report: this tree's API or worker bundle, or any
 * node command line in another tree (a release's bundles).
 */
export class ServiceProcess {
  readonly output: string[] = [];
  private child: ChildProcess | undefined;

  constructor(
    readonly name: string,
    /** node's arguments (flags, script, the script's arguments). */
    private readonly nodeArgs: string[],
    private readonly env: Record<string, string>,
    private readonly cwd = ROOT,
  ) {}

  static api(name: string, env: Record<string, string>): ServiceProcess {
    return new ServiceProcess(name, API, env);
  }

  static worker(name: string, roles: string[], env: Record<string, string>): ServiceProcess {
    return new ServiceProcess(name, [...WORKER, "--role", roles.join(",")], env);
  }

  /** Starts the process and waits until it logs `readyLine` (pino JSON lines on stdout). */
  async start(readyLine: string, timeoutMs = 30_000): Promise<void> {
    const child = spawn(process.execPath, this.nodeArgs, {
      cwd: this.cwd,
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...this.env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    this.child = child;
    const collect = (chunk: Buffer) => {
      for (const line of chunk.toString().split("\n")) if (line.trim()) this.output.push(line);
      if (this.output.length > 5000) this.output.splice(0, this.output.length - 5000);
    };
    child.stdout?.on("data", collect);
    child.stderr?.on("data", collect);
    await eventually(
      () => {
        if (child.exitCode !== null) throw new Error(`${this.name} exited: ${this.output.slice(-5).join("\n")}`);
        return this.output.some((line) => line.includes(readyLine));
      },
      timeoutMs,
      `${this.name} to log "${readyLine}"`,
    ).catch((error) => {
      child.kill("SIGKILL");
      throw new Error(`${this.name} did not start: ${error.message}\n${this.output.slice(-10).join("\n")}`);
    });
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get exitCode(): number | null {
    return this.child?.exitCode ?? null;
  }

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Sends a signal and waits for the process to be gone. */
  async kill(signal: NodeJS.Signals = "SIGKILL"): Promise<void> {
    const child = this.child;
    if (!child || !this.running) return;
    const exited = once(child, "exit");
    child.kill(signal);
    await exited;
  }

  /** Lines of output (pino JSON) that mention `text`. */
  linesWith(text: string): string[] {
    return this.output.filter((line) => line.includes(text));
  }
}

/**
 * Runs the API on `env` until it exits by itself (a start that must fail): its exit status and
 * everything it wrote.
 */
export async function runApiToExit(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const api = spawn(process.execPath, API, {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  api.stdout?.on("data", (chunk: Buffer) => (output += chunk));
  api.stderr?.on("data", (chunk: Buffer) => (output += chunk));
  const [code] = (await once(api, "exit")) as [number | null];
  return { code, output };
}

/** Process ids whose parent is `pid` (the API processes of a WEB_CONCURRENCY primary); [] without /proc. */
export function childrenOf(pid: number | undefined): number[] {
  if (pid === undefined) return [];
  try {
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim();
    return children ? children.split(" ").map(Number) : [];
  } catch {
    return [];
  }
}

/** API readiness: it answers /healthz on its port. */
export async function startApi(api: ServiceProcess, baseUrl: string): Promise<void> {
  await api.start("api listening");
  await eventually(async () => (await fetch(`${baseUrl}/healthz`)).ok, 10_000, "API /healthz");
}
