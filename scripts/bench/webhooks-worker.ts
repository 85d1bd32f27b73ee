import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createWriteStream } from "node:fs";
import { migrateDatabase } from "@outcomes/db";
import postgres from "postgres";
import { productionNodeArgs } from "./processes.js";

const withDatabase = (url: string, name: string) => Object.assign(new URL(url), { pathname: `/${name}` }).toString();

/**
 * A webhooks bench's own database (`outcomes_bench_<kind>_<run id>`, migrated) and Redis prefix on
 * DATABASE_URL's server and REDIS_URL: names of the run's own, so two benches on one server never
 * drop each other's.
 */
export async function benchDeployment(kind: string) {
  const baseUrl = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/outcomes";
  const runId = randomBytes(4).toString("hex");
  const name = `outcomes_bench_${kind}_${runId}`;
  const drop = async () => {
    const admin = postgres(withDatabase(baseUrl, "postgres"), { max: 1, onnotice: () => {} });
    await admin.unsafe(`drop database if exists "${name}" with (force)`);
    await admin.end();
  };
  const databaseUrl = withDatabase(baseUrl, name);
  await drop();
  await migrateDatabase(databaseUrl);
  return {
    databaseUrl,
    redisUrl: process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
    prefix: `bench:${runId}`,
    drop,
  };
}

export interface WebhooksWorkerOptions {
  deployment: Awaited<ReturnType<typeof benchDeployment>>;
  /** Another commit's worker bundle (an A/B); by default this tree's, built now. */
  bundle?: string | undefined;
  /** Node flags before the production ones (`--cpu-prof`, `--trace-gc`). */
  nodeFlags?: string[];
  /** Where the worker's output goes (its log), besides the check for its start. */
  logFile?: string | undefined;
}

/**
 * One `webhooks` worker process exactly as `npm run start:worker -- --role webhooks` runs it in
 * production (the bundle on plain node, default settings), on the bench's deployment; resolves once
 * it logs that its role started.
 */
export async function startWebhooksWorker(options: WebhooksWorkerOptions): Promise<ChildProcess> {
  const { deployment, bundle } = options;
  if (!bundle) execFileSync(process.execPath, ["scripts/build.mjs"], { stdio: "ignore" });
  const node = bundle
    ? [...productionNodeArgs("start:worker").slice(0, -1), bundle]
    : productionNodeArgs("start:worker");
  const child = spawn(process.execPath, [...(options.nodeFlags ?? []), ...node, "--role", "webhooks"], {
    env: {
      ...process.env,
      DATABASE_URL: deployment.databaseUrl,
      REDIS_URL: deployment.redisUrl,
      REDIS_CLUSTER_NODES: process.env.REDIS_CLUSTER_NODES ?? "",
      REDIS_PREFIX: deployment.prefix,
      LOG_LEVEL: "info",
      WORKER_METRICS_PORT: "0",
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  if (options.logFile) child.stdout?.pipe(createWriteStream(options.logFile));
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-10_000);
  });
  for (let tries = 0; tries < 300 && !output.includes('"msg":"role started"'); tries++) {
    if (child.exitCode !== null) throw new Error(`worker exited with ${child.exitCode}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return child;
}
