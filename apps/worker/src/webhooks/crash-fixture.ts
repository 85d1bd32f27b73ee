/**
 * Run by crash.test.ts as a child process: the `webhooks` role as `main.ts` starts it, but with a
 * one-second job lock, so the test can SIGKILL it mid-delivery and see another worker take over.
 */
import { createDatabase } from "@outcomes/db";
import { createWorkerRedis, Producers, redisKeys } from "@outcomes/queue";
import { createLogger, parseEnv } from "@outcomes/runtime";
import { webhooksRole } from "./index.js";

const env = parseEnv();
const database = createDatabase(env.DATABASE_URL, { max: 3 });
const redis = createWorkerRedis(env.REDIS_URL);
await webhooksRole({ pollIntervalMs: 100, lockDurationMs: 1000, stalledIntervalMs: 500 })({
  env,
  db: database.db,
  redis,
  newConnection: () => createWorkerRedis(env.REDIS_URL),
  keys: redisKeys(env.REDIS_PREFIX),
  producers: new Producers(redis, env.REDIS_PREFIX),
  logger: createLogger(env.LOG_LEVEL, "crash-fixture"),
  bullPrefix: `${env.REDIS_PREFIX}:bull`,
});
process.stdout.write("ready\n");
