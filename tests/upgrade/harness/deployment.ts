import { randomBytes } from "node:crypto";
import { createWorkerRedis, type RedisClient } from "@outcomes/queue";
import { parseEnv } from "@outcomes/runtime";
import { deleteTestKeys, requiredEnv, testRedisPrefix } from "@outcomes/testkit/databases";
import { freePort } from "@outcomes/testkit/ports";
import postgres, { type Sql } from "postgres";
import { ApiClient, FAULT_ADMIN_TOKEN } from "../../faults/harness/http.js";
import { eventually, type ServiceProcess, startApi } from "../../faults/harness/processes.js";
import type { Release } from "./release.js";

/** The worker roles (CONTRACT §1), each run as a process of its own so a rollout replaces them one at a time. */
export const WORKER_ROLES = ["blocks", "settlements", "webhooks", "key-expiry"] as const;

/** Deployments not closed yet: a test that timed out closes them from its afterAll. */
const open = new Set<Deployment>();

/** Stops the processes and drops the state of every deployment still open. */
export async function closeOpenDeployments(): Promise<void> {
  for (const deployment of open) await deployment.close();
}

/** One API process of a release, and its address. */
export interface ApiInstance {
  release: Release;
  process: ServiceProcess;
  client: ApiClient;
}

/**
 * One deployment's shared state: an EMPTY database (each release migrates it itself), a Redis
 * prefix of its own, and the settings every process of either release gets; the processes
 * started on it; and the test's own connections for the checks.
 */
export class Deployment {
  readonly processes: ServiceProcess[] = [];
  readonly sql: Sql;
  readonly redis: RedisClient;

  private constructor(
    readonly databaseName: string,
    readonly env: Record<string, string>,
  ) {
    this.sql = postgres(env.DATABASE_URL!, { max: 3, onnotice: () => {} });
    this.redis = createWorkerRedis(
      parseEnv({ REDIS_URL: env.REDIS_URL, REDIS_CLUSTER_NODES: env.REDIS_CLUSTER_NODES }),
    );
    this.redis.on("error", () => {});
    open.add(this);
  }

  static async create(env: Record<string, string> = {}): Promise<Deployment> {
    const name = `outcomes_upgrade_${randomBytes(6).toString("hex")}`;
    await admin((sql) => sql.unsafe(`create database "${name}"`));
    const url = Object.assign(new URL(requiredEnv("DATABASE_URL")), { pathname: `/${name}` }).toString();
    return new Deployment(name, {
      DATABASE_URL: url,
      REDIS_URL: requiredEnv("REDIS_URL"),
      // The `upgrade-cluster` project: both releases on the run's Redis Cluster.
      ...(process.env.REDIS_CLUSTER_NODES ? { REDIS_CLUSTER_NODES: process.env.REDIS_CLUSTER_NODES } : {}),
      REDIS_PREFIX: testRedisPrefix(),
      ADMIN_TOKEN: FAULT_ADMIN_TOKEN,
      // Small blocks: generation runs every few seconds of load, on whichever blocks worker is up.
      BLOCK_SIZE: "100",
      MIN_READY_BLOCKS: "2",
      TARGET_READY_BLOCKS: "3",
      WEBHOOK_RETRY_DELAYS_MS: "200,200,200,200",
      WEBHOOK_TIMEOUT_MS: "2000",
      RATE_LIMIT_SPINS_PER_SECOND: "100000",
      RATE_LIMIT_REQUESTS_PER_SECOND: "100000",
      WORKER_METRICS_PORT: "0",
      LOG_LEVEL: "info",
      ...env,
    });
  }

  get redisPrefix(): string {
    return this.env.REDIS_PREFIX!;
  }

  async startApi(release: Release, name = "api"): Promise<ApiInstance> {
    const port = await freePort();
    const process = release.api(name, { ...this.env, PORT: String(port) });
    this.processes.push(process);
    const client = new ApiClient(`http://127.0.0.1:${port}`);
    await startApi(process, client.baseUrl);
    return { release, process, client };
  }

  async startWorker(release: Release, role: string): Promise<ServiceProcess> {
    const worker = release.worker(role, this.env);
    this.processes.push(worker);
    await worker.start("role started");
    await eventually(
      () => worker.linesWith("role started").some((line) => line.includes(`"role":"${role}"`)),
      20_000,
      `${worker.name} to start`,
    );
    return worker;
  }

  /** A release's every worker role, one process each, started together. */
  startWorkers(release: Release): Promise<ServiceProcess[]> {
    return Promise.all(WORKER_ROLES.map((role) => this.startWorker(release, role)));
  }

  /** Output lines of every process that contain `text`, named by process. */
  logLinesWith(text: string): string[] {
    return this.processes.flatMap((process) => process.linesWith(text).map((line) => `${process.name}: ${line}`));
  }

  async close(): Promise<void> {
    if (!open.delete(this)) return;
    if (process.env.FAULTS_DEBUG) {
      for (const service of this.processes) console.log(`--- ${service.name}\n${service.output.slice(-20).join("\n")}`);
    }
    for (const service of this.processes) await service.kill();
    await deleteTestKeys(this.redisPrefix);
    this.redis.disconnect();
    await this.sql.end();
    await admin((sql) => sql.unsafe(`drop database if exists "${this.databaseName}" with (force)`));
  }
}

async function admin(action: (sql: Sql) => Promise<unknown>): Promise<void> {
  const url = Object.assign(new URL(requiredEnv("DATABASE_URL")), { pathname: "/postgres" }).toString();
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await action(sql);
  } finally {
    await sql.end();
  }
}
