import type { Database } from "@outcomes/db";
import type { Producers, RedisClient, RedisKeys } from "@outcomes/queue";
import type { Env, Logger } from "@outcomes/runtime";

/** What every worker role gets at start-up. */
export interface WorkerContext {
  env: Env;
  db: Database;
  /** Shared connection for producers and plain commands (outcome lists). */
  redis: RedisClient;
  /** A new blocking connection for a BullMQ Worker (each Worker needs its own). */
  newConnection: () => RedisClient;
  keys: RedisKeys;
  producers: Producers;
  logger: Logger;
  /** BullMQ key prefix: `{${REDIS_PREFIX}:bull}` (bullPrefix). */
  bullPrefix: string;
}

/** A started role: `close` stops taking jobs and waits for the running ones. */
export interface RunningRole {
  close: () => Promise<void>;
}

export type RoleStarter = (context: WorkerContext) => Promise<RunningRole>;
