import { createDatabase, WORKER_CONNECTION_LIMITS } from "@outcomes/db";
import { bullPrefix, createWorkerRedis, Producers, redisKeys } from "@outcomes/queue";
import { type Env, type Logger, ShutdownManager } from "@outcomes/runtime";
import type { RoleStarter, RunningRole, WorkerContext } from "./context.js";

// At most four transactions at once hold a connection of this pool (two blocks fills, whose lock
// transactions also send statements to the pool, one settlement and one key-expiry job; webhooks
// have a pool of their own), so the fifth is always free for the fills' own statements. A role
// with more concurrent transactions must grow this; the limits turn a mistake into errors.
const DATABASE_POOL_SIZE = 5;

/**
 * One worker process's Postgres pool, Redis connection and producers, and `roles` started on them
 * in order, each keyed by the name its logs carry: the only wiring of the worker. `main.ts` adds
 * the metrics server and signal handling; tests and the crash fixture start the roles they need.
 * `close` stops the roles, then what they ran on, in reverse order.
 */
export async function startWorker(env: Env, logger: Logger, roles: Record<string, RoleStarter>): Promise<RunningRole> {
  const shutdown = new ShutdownManager(logger);
  try {
    const database = createDatabase(env.DATABASE_URL, { max: DATABASE_POOL_SIZE, limits: WORKER_CONNECTION_LIMITS });
    shutdown.register("postgres", database.close);
    const redis = createWorkerRedis(env);
    shutdown.register("redis", () => redis.quit());
    const producers = new Producers(redis, env.REDIS_PREFIX);
    shutdown.register("producers", () => producers.close());

    const context: WorkerContext = {
      env,
      db: database.db,
      redis,
      newConnection: () => createWorkerRedis(env),
      keys: redisKeys(env.REDIS_PREFIX),
      producers,
      logger,
      bullPrefix: bullPrefix(env.REDIS_PREFIX),
    };
    for (const [role, start] of Object.entries(roles)) {
      const running = await start({ ...context, logger: logger.child({ role }) });
      shutdown.register(`role ${role}`, running.close);
      logger.info({ role }, "role started");
    }
    return { close: () => shutdown.shutdown() };
  } catch (error) {
    // A start-up that fails half-way closes what it had opened.
    await shutdown.shutdown();
    throw error;
  }
}
