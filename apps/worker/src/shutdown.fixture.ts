/**
 * Started by shutdown.test.ts as a child process: the webhooks role wired as main.ts wires it, but
 * with BullMQ locks of one second, so a test can SIGKILL it mid-job and watch another worker take
 * the job over without waiting the production 30 s.
 */
import { createDatabase } from "@outcomes/db";
import { createWorkerRedis, Producers, redisKeys } from "@outcomes/queue";
import { createLogger, loadEnvOrExit } from "@outcomes/runtime";
import { webhooksRole } from "./webhooks/index.js";

const env = loadEnvOrExit();
const redis = createWorkerRedis(env.REDIS_URL);
await webhooksRole({ lockDurationMs: 1000, stalledIntervalMs: 500, pollIntervalMs: 100 })({
  env,
  db: createDatabase(env.DATABASE_URL, { max: 2 }).db,
  redis,
  newConnection: () => createWorkerRedis(env.REDIS_URL),
  keys: redisKeys(env.REDIS_PREFIX),
  producers: new Producers(redis, env.REDIS_PREFIX),
  logger: createLogger(env.LOG_LEVEL, "worker-fixture"),
  bullPrefix: `${env.REDIS_PREFIX}:bull`,
});
process.stdout.write("fixture ready\n");
