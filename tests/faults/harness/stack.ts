import { bullPrefix, deleteKeysUnder, type RedisClient } from "@outcomes/queue";
import { createTestDatabase, requiredEnv, type TestDatabase, testRedisPrefix } from "@outcomes/testkit/databases";
import { freePort } from "@outcomes/testkit/ports";
import { Queue } from "bullmq";
import { Cluster, Redis } from "ioredis";
import postgres, { type Sql } from "postgres";
import { ApiClient, createWorld, FAULT_ADMIN_TOKEN, type World, waitForReserve } from "./http.js";
import { eventually, ServiceProcess, startApi } from "./processes.js";

export interface StackOptions {
  /**
   * Where the processes find Redis (default: the tests' Redis, REDIS_URL or the cluster of
   * REDIS_CLUSTER_NODES, under a prefix of this file's own).
   */
  redisUrl?: string;
  /** A Redis Cluster of the file's own (`host:port,…`), instead of `redisUrl`. */
  clusterNodes?: string;
  /** Rewrites the database URL the processes get (e.g. through a proxy); checks connect directly. */
  databaseUrlFor?: (url: string) => string;
  env?: Record<string, string>;
}

/**
 * One test file's deployment: a fresh database, a Redis prefix of its own, the environment every
 * process gets, and the real processes started from it. The test's own checks connect directly.
 */
export class Stack {
  readonly processes: ServiceProcess[] = [];
  api!: ApiClient;
  apiProcess!: ServiceProcess;
  sql!: Sql;
  redis!: RedisClient;
  private readonly connections: RedisClient[] = [];
  env: Record<string, string> = {};
  private database!: TestDatabase;

  static async create(options: StackOptions = {}): Promise<Stack> {
    const stack = new Stack();
    stack.database = await createTestDatabase();
    const redisUrl = options.redisUrl ?? requiredEnv("REDIS_URL");
    const clusterNodes = options.clusterNodes ?? (options.redisUrl ? undefined : process.env.REDIS_CLUSTER_NODES);
    const port = await freePort();
    stack.env = {
      DATABASE_URL: options.databaseUrlFor?.(stack.database.url) ?? stack.database.url,
      REDIS_URL: redisUrl,
      ...(clusterNodes ? { REDIS_CLUSTER_NODES: clusterNodes } : {}),
      REDIS_PREFIX: testRedisPrefix(),
      PORT: String(port),
      ADMIN_TOKEN: FAULT_ADMIN_TOKEN,
      BLOCK_SIZE: "500",
      MIN_READY_BLOCKS: "2",
      TARGET_READY_BLOCKS: "4",
      WEBHOOK_RETRY_DELAYS_MS: "200,200,200,200",
      WEBHOOK_TIMEOUT_MS: "2000",
      RATE_LIMIT_SPINS_PER_SECOND: "100000",
      RATE_LIMIT_REQUESTS_PER_SECOND: "100000",
      WORKER_JOB_LOCK_MS: "1000",
      WORKER_METRICS_PORT: "0",
      // Off: a test that scrapes the API gives it a port of its own.
      API_METRICS_PORT: "0",
      LOG_LEVEL: "info",
      ...options.env,
    };
    stack.api = new ApiClient(`http://127.0.0.1:${port}`);
    stack.sql = postgres(stack.database.url, { max: 3, onnotice: () => {} });
    // The checks' own connection: Redis may be down on purpose; commands then fail, events are noise.
    stack.redis = stack.connect({ maxRetriesPerRequest: 1 });
    return stack;
  }

  /** A connection to the deployment's Redis (its cluster when it has one), closed with the stack. */
  private connect(options: { maxRetriesPerRequest: number | null }): RedisClient {
    const nodes = this.env.REDIS_CLUSTER_NODES;
    const client = nodes
      ? new Cluster(
          nodes.split(",").map((node) => ({ host: node.split(":")[0], port: Number(node.split(":")[1]) })),
          { redisOptions: options },
        )
      : new Redis(this.env.REDIS_URL!, options);
    client.on("error", () => {});
    this.connections.push(client);
    return client;
  }

  get redisPrefix(): string {
    return this.env.REDIS_PREFIX!;
  }

  async startApi(name = "api"): Promise<ServiceProcess> {
    this.apiProcess = ServiceProcess.api(name, this.env);
    this.processes.push(this.apiProcess);
    await startApi(this.apiProcess, this.api.baseUrl);
    return this.apiProcess;
  }

  async startWorker(name: string, roles: string[], env: Record<string, string> = {}): Promise<ServiceProcess> {
    const worker = ServiceProcess.worker(name, roles, { ...this.env, ...env });
    this.processes.push(worker);
    await worker.start("role started");
    const started = (role: string) =>
      worker.linesWith("role started").some((line) => line.includes(`"role":"${role}"`));
    await eventually(() => roles.every(started), 20_000, `${name} roles`);
    return worker;
  }

  /** A BullMQ queue handle on this deployment's prefix (to add or inspect jobs as an operator would). */
  queue(name: string): Queue {
    return new Queue(name, {
      connection: this.connect({ maxRetriesPerRequest: null }),
      prefix: bullPrefix(this.redisPrefix),
    });
  }

  /** Runs one `blocks.generate` of a game to completion: the reconciliation turn the design relies on. */
  async runGeneration(gameId: number, timeoutMs = 20_000): Promise<void> {
    const queue = this.queue("blocks");
    try {
      const job = await queue.add("blocks.generate", { gameId });
      await eventually(async () => (await job.getState()) === "completed", timeoutMs, "blocks.generate to complete");
    } finally {
      await queue.close();
    }
  }

  /** Output lines of every process started here that contain `text`. */
  logLinesWith(text: string): string[] {
    return this.processes.flatMap((process) => process.linesWith(text).map((line) => `${process.name}: ${line}`));
  }

  async close(): Promise<void> {
    // FAULTS_DEBUG=1 shows what each process said last (their logs are otherwise only kept in memory).
    if (process.env.FAULTS_DEBUG) {
      for (const service of this.processes) console.log(`--- ${service.name}\n${service.output.slice(-20).join("\n")}`);
    }
    for (const process of this.processes) await process.kill();
    await deleteKeysUnder(this.redis, this.redisPrefix).catch(() => {});
    for (const connection of this.connections) connection.disconnect();
    await this.sql.end();
    await this.database.drop();
  }
}

export interface WorldOptions {
  stack?: StackOptions;
  /** The worker that fills the reserve (default `worker-blocks` with the `blocks` role alone). */
  worker?: { name: string; roles: string[] };
  apiName?: string;
  /** Ready blocks to wait for before the test starts (default 4). */
  readyBlocks?: number;
}

/**
 * A stack with a blocks worker and the API, and a world whose game has its reserve filled: where
 * most fault tests start. A failure on the way closes the stack, as the caller never received it.
 */
export async function startWorld(
  options: WorldOptions = {},
): Promise<{ stack: Stack; world: World; worker: ServiceProcess }> {
  const { name, roles } = options.worker ?? { name: "worker-blocks", roles: ["blocks"] };
  const stack = await Stack.create(options.stack);
  try {
    const worker = await stack.startWorker(name, roles);
    await stack.startApi(options.apiName);
    const world = await createWorld(stack.api);
    await waitForReserve(stack.api, world.gameId, options.readyBlocks ?? 4);
    return { stack, world, worker };
  } catch (error) {
    await stack.close().catch(() => {});
    throw error;
  }
}
