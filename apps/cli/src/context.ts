import { createDatabase, type Database, type DatabaseClient, WORKER_CONNECTION_LIMITS } from "@outcomes/db";
import {
  createRequestRedis,
  type Invalidation,
  type IssuedKeyChange,
  Producers,
  publishInvalidation,
  type RedisClient,
  type RedisKeys,
  redisKeys,
  untilReady,
  updateIssuedKeys,
} from "@outcomes/queue";
import { type Env, parseEnv } from "@outcomes/runtime";

/** Where the CLI reads its configuration and writes its output (the process's, or a test's). */
export interface CliIo {
  env: Record<string, string | undefined>;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

/**
 * What a command needs, opened on first use and closed once the command ends, so `--help` and
 * argument errors never touch Postgres or Redis.
 */
export class CliContext {
  private parsedEnv: Env | undefined;
  private database: DatabaseClient | undefined;
  private redisClient: RedisClient | undefined;
  private queueProducers: Producers | undefined;

  constructor(
    readonly io: CliIo,
    readonly json: boolean,
  ) {}

  get env(): Env {
    this.parsedEnv ??= parseEnv(this.io.env);
    return this.parsedEnv;
  }

  get keys(): RedisKeys {
    return redisKeys(this.env.REDIS_PREFIX);
  }

  db(): Database {
    this.database ??= createDatabase(this.env.DATABASE_URL, { max: 2, limits: WORKER_CONNECTION_LIMITS });
    return this.database.db;
  }

  async redis(): Promise<RedisClient> {
    if (!this.redisClient) {
      // No reconnecting: a one-shot command should fail at once and say why.
      this.redisClient = createRequestRedis(this.env, {
        lazyConnect: true,
        connectTimeout: 5000,
        retryStrategy: () => null,
      });
      let lastError: Error | undefined;
      this.redisClient.on("error", (error: Error) => {
        lastError = error;
      });
      const client = this.redisClient;
      await client
        .connect()
        .then(() => untilReady(client))
        .catch((error: Error) => {
          throw new Error(`cannot reach Redis: ${(lastError ?? error).message}`);
        });
    }
    return this.redisClient;
  }

  /** BullMQ producers on the command's Redis connection: queues the same jobs the operator API queues. */
  async producers(): Promise<Producers> {
    this.queueProducers ??= new Producers(await this.redis(), this.env.REDIS_PREFIX);
    return this.queueProducers;
  }

  /**
   * Tells every API process a committed change happened. A failure is a warning, not an error: the
   * change stands, and API caches expire within 1 s anyway.
   */
  async announce(what: Invalidation): Promise<void> {
    try {
      await publishInvalidation(await this.redis(), this.keys, what);
    } catch (error) {
      this.io.stderr(`warning: could not notify API processes (${(error as Error).message}); they follow within 1 s\n`);
    }
  }

  /**
   * Announces committed changes of API keys after updating the issued-key set (packages/queue
   * issued-keys.ts). A failed update is a warning: the keys work regardless, and one not listed is
   * only counted against its address until the key-expiry role lists it (within the hour).
   */
  async announceKeyChange(change: IssuedKeyChange): Promise<void> {
    try {
      await updateIssuedKeys(await this.redis(), this.keys, change);
    } catch (error) {
      this.io.stderr(
        `warning: could not update the issued-key set (${(error as Error).message}); the key-expiry role does within the hour\n`,
      );
    }
    await this.announce("auth");
  }

  /** JSON for scripts, or the human rendering. */
  print(value: unknown, human: () => string): void {
    this.io.stdout(this.json ? `${JSON.stringify(value, null, 2)}\n` : `${human()}\n`);
  }

  async close(): Promise<void> {
    // Nothing is in flight once the command has ended; waiting on a dead server would only stall the exit.
    await this.queueProducers?.close();
    await Promise.all([this.database?.sql.end({ timeout: 0 }), this.redisClient?.disconnect()]);
  }
}
