import { serve } from "@hono/node-server";
import { type Environment, usdToMicros } from "@outcomes/core";
import { API_CONNECTION_LIMITS, createDatabase } from "@outcomes/db";
import { createRequestRedis, createWorkerRedis, Producers, redisKeys } from "@outcomes/queue";
import { createLogger, listenErrorMessage, loadEnvOrExit, ShutdownManager } from "@outcomes/runtime";
import { createApp } from "./app.js";
import { KeyVerifier } from "./auth/key-verifier.js";
import { answerClientErrors } from "./client-errors.js";
import { subscribeInvalidations } from "./invalidation.js";
import { MaintenanceSwitch } from "./middleware/maintenance.js";
import { GameCache } from "./spins/game-cache.js";

const env = loadEnvOrExit();
const logger = createLogger(env.LOG_LEVEL, "api");
const shutdown = new ShutdownManager(logger);
shutdown.installSignalHandlers();

const database = createDatabase(env.DATABASE_URL, { max: 10, limits: API_CONNECTION_LIMITS });
shutdown.register("postgres", database.close);
// Auto-pipelining: concurrent requests' rate-limit scripts and LPOPs share socket writes.
const redis = createRequestRedis(env.REDIS_URL, { enableAutoPipelining: true });
shutdown.register("redis", () => redis.quit());
const queueRedis = createWorkerRedis(env.REDIS_URL);
shutdown.register("queue redis", () => queueRedis.quit());
const producers = new Producers(queueRedis, env.REDIS_PREFIX);
shutdown.register("producers", () => producers.close());

const keys = redisKeys(env.REDIS_PREFIX);
const keyVerifier = new KeyVerifier(database.db, env.ALLOWED_ENVIRONMENTS as Environment[], (error) =>
  logger.warn({ err: error }, "lastUsedAt update failed"),
);
const maintenance = new MaintenanceSwitch(redis, keys);
const games = new GameCache(database.db, usdToMicros(env.LARGE_WIN_THRESHOLD_USD) ?? 0);
const subscriber = await subscribeInvalidations(env.REDIS_URL, keys, { keyVerifier, maintenance, games }, logger);
shutdown.register("invalidation subscriber", () => subscriber.quit());

const app = createApp({ env, db: database.db, redis, keys, producers, logger, keyVerifier, maintenance, games });
const server = serve({ fetch: app.fetch, port: env.PORT }, (info) => logger.info({ port: info.port }, "api listening"));
// Two APIs on one port is a mistake: one line naming PORT and exit 1, not an uncaught stack.
server.once("error", (error: NodeJS.ErrnoException) => {
  if (error.syscall !== "listen") throw error;
  logger.fatal({ port: env.PORT }, listenErrorMessage("PORT", env.PORT, error));
  void shutdown.shutdown().finally(() => process.exit(1));
});
answerClientErrors(server, logger);
shutdown.register("http server", () => new Promise<void>((resolve) => server.close(() => resolve())));
