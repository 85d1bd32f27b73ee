import type { AddressInfo } from "node:net";
import { buildApi } from "@outcomes/api/build-api";
import type { AppDeps } from "@outcomes/api/context";
import { serveApi } from "@outcomes/api/http-server";
import { CURRENT_RELEASE, type Environment, generateApiKey, newId } from "@outcomes/core";
import { apiKeys, finishRollout, games, partners, releaseRollouts } from "@outcomes/db";
import type { GameOwner } from "@outcomes/queue";
import { createLogger, type Env, type Logger, parseEnv, startMetricsServer } from "@outcomes/runtime";
import { eq } from "drizzle-orm";
import { createTestDatabase, deleteTestKeys, requiredEnv, type TestDatabase, testRedisPrefix } from "./databases.js";
import { readAnswer } from "./http-answer.js";

export const TEST_ADMIN_TOKEN = "test-admin-token-0123456789";

export interface TestApi {
  baseUrl: string;
  /** The metrics listener (API_METRICS_PORT in production; a free port here): `${metricsUrl}/metrics`. */
  metricsUrl: string;
  deps: AppDeps;
  database: TestDatabase;
  redisPrefix: string;
  /** fetch against the running server, JSON in and out. */
  request: (
    path: string,
    init?: RequestInit & { json?: unknown; apiKey?: string; admin?: boolean },
  ) => Promise<{
    status: number;
    headers: Headers;
    body: any;
  }>;
  /** A partner with a key, inserted directly (tests of the operator API use the API instead). */
  createPartner: (options?: {
    environment?: Environment;
    slug?: string;
  }) => Promise<{ partnerId: string; apiKey: string }>;
  /** The game's id with its partner and environment, which its Redis keys are named by (`deps.keys`). */
  gameOwner: (gameId: number) => Promise<GameOwner>;
  close: () => Promise<void>;
}

export interface TestApiOptions {
  /** Share another instance's database and Redis prefix (a second API process); the owner drops it. */
  shareWith?: Pick<TestApi, "database" | "redisPrefix">;
  /** Run on this database (e.g. on a server of the test's own) instead of a copy of the template. */
  database?: TestDatabase;
  /** Log somewhere observable instead of nowhere. */
  logger?: Logger;
  /**
   * Where the deployment is in rolling out this release (docs/upgrades.md): `finished` (default, the
   * steady state: every feature on) or `running` (an earlier release may still run beside it, so
   * features it would misread are off until `release finish`). Set by the instance that owns the database.
   */
  rollout?: "finished" | "running";
}

/**
 * Starts the real API (buildApi, as main.ts does) on an ephemeral port over a fresh database and a
 * Redis key prefix of its own. `env` overrides any variable (e.g. tight rate limits).
 */
export async function startTestApi(env: Record<string, string> = {}, options: TestApiOptions = {}): Promise<TestApi> {
  const database = options.shareWith?.database ?? options.database ?? (await createTestDatabase());
  const serviceEnv: Env = parseEnv({
    DATABASE_URL: database.url,
    REDIS_URL: requiredEnv("REDIS_URL"),
    REDIS_CLUSTER_NODES: process.env.REDIS_CLUSTER_NODES,
    REDIS_PREFIX: options.shareWith?.redisPrefix ?? testRedisPrefix(),
    ADMIN_TOKEN: TEST_ADMIN_TOKEN,
    LOG_LEVEL: "silent",
    RATE_LIMIT_REQUESTS_PER_SECOND: "10000",
    RATE_LIMIT_SPINS_PER_SECOND: "10000",
    ...env,
  });
  if (!options.shareWith) {
    // Test databases copy a template migrated fresh, so finished (see migrateDatabase); "running"
    // is a database an earlier release migrated, whose rollout has not finished.
    if (options.rollout === "running") {
      await database.db.delete(releaseRollouts).where(eq(releaseRollouts.release, CURRENT_RELEASE));
    } else {
      await finishRollout(database.db, CURRENT_RELEASE);
    }
  }
  const logger = options.logger ?? createLogger(serviceEnv.LOG_LEVEL, "api-test");
  // The owner runs on the test database's client, shared with its fixtures; a second instance
  // opens a pool of its own, as a second process would.
  const { app, deps, close } = await buildApi(serviceEnv, logger, options.shareWith ? {} : { database });
  const server = serveApi(app, serviceEnv, logger, { port: 0, hostname: "127.0.0.1" });
  await new Promise<void>((resolve) => server.once("listening", () => resolve()));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const metrics = await startMetricsServer(0, "127.0.0.1");

  const request: TestApi["request"] = async (path, init = {}) => {
    const { json, apiKey, admin, ...rest } = init;
    const headers = new Headers(rest.headers);
    if (json !== undefined) headers.set("Content-Type", "application/json");
    if (apiKey) headers.set("X-API-Key", apiKey);
    if (admin) headers.set("Authorization", `Bearer ${TEST_ADMIN_TOKEN}`);
    const response = await fetch(baseUrl + path, {
      ...rest,
      headers,
      body: json !== undefined ? JSON.stringify(json) : rest.body,
    });
    return readAnswer(response);
  };

  const createPartner: TestApi["createPartner"] = async (options = {}) => {
    const partnerId = newId("ptr");
    const environment = options.environment ?? "sandbox";
    await database.db
      .insert(partners)
      .values({ id: partnerId, slug: options.slug ?? partnerId.toLowerCase(), name: "Test partner" });
    const generated = generateApiKey(environment);
    await database.db.insert(apiKeys).values({
      id: newId("key"),
      partnerId,
      environment,
      keyHash: generated.hash,
      prefix: generated.displayPrefix,
      expiresAt: new Date(Date.now() + 365 * 24 * 3600 * 1000),
    });
    return { partnerId, apiKey: generated.key };
  };

  const gameOwner: TestApi["gameOwner"] = async (gameId) => {
    const [game] = await database.db
      .select({ id: games.id, partnerId: games.partnerId, environment: games.environment })
      .from(games)
      .where(eq(games.id, gameId));
    if (!game) throw new Error(`game ${gameId} does not exist`);
    return game;
  };

  return {
    baseUrl,
    metricsUrl: `http://127.0.0.1:${metrics.port}`,
    deps,
    database,
    redisPrefix: serviceEnv.REDIS_PREFIX,
    request,
    createPartner,
    gameOwner,
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await metrics.close();
      await close();
      if (options.shareWith) return;
      // The owner removes its Redis keys too, so test runs leave nothing behind on a shared Redis.
      await deleteTestKeys(serviceEnv.REDIS_PREFIX);
      await database.drop();
    },
  };
}
