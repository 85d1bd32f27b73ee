import { setTimeout as sleep } from "node:timers/promises";
import { type Environment, usdToMicros } from "@outcomes/core";
import {
  API_CONNECTION_LIMITS,
  countSpinRefusal,
  createDatabase,
  createFreeRoundGrant,
  type DatabaseClient,
  findIdempotencyRecord,
  lockSpinForVoid,
  ReplayLinks,
  RolloutSwitch,
  recordSpinVoid,
  sqlClientOf,
} from "@outcomes/db";
import {
  closeRedis,
  createRequestRedis,
  createWorkerRedis,
  enqueueGeneration,
  notifyEvents,
  Producers,
  redisKeys,
  untilReady,
} from "@outcomes/queue";
import { countSpin, type Env, type Logger, ShutdownManager } from "@outcomes/runtime";
import { createApp } from "./app.js";
import { clientAddresses } from "./auth/client-address.js";
import { KeyVerifier } from "./auth/key-verifier.js";
import type { AppDeps } from "./context.js";
import { GrantService } from "./free-rounds/grant-service.js";
import { KeyedCreates } from "./idempotency.js";
import { subscribeInvalidations } from "./invalidation.js";
import { MaintenanceSwitch } from "./middleware/maintenance.js";
import { RateLimiter, REQUEST_REDIS_OPTIONS, TurnDraws, withDraws } from "./ratelimit/index.js";
import { withWindowedGcra } from "./replay/address-limit.js";
import { revealedPageCache } from "./routes/partner/revealed-pages.js";
import { BlockFactsCache } from "./spins/block-facts.js";
import { ForcedOutcomes } from "./spins/forced-outcomes.js";
import { FreeRoundCache } from "./spins/free-round-cache.js";
import { GameCache } from "./spins/game-cache.js";
import { GroupCommit } from "./spins/group-commit.js";
import { OutcomeTaker, withGiveBack } from "./spins/outcome-taker.js";
import { SpinPlanner } from "./spins/spin-plan.js";
import { SpinService } from "./spins/spin-service.js";
import { VoidService } from "./voids/void-service.js";

/** What the services are built from. */
type Services = Omit<
  AppDeps,
  "spins" | "voids" | "grants" | "creates" | "revealedPages" | "replayLinks" | "clientAddress"
>;

/** Postgres connections of one API process. */
const DATABASE_POOL_SIZE = 10;
/** How long a start waits for Redis before serving without it (spins fail as unavailable until it is back). */
const REDIS_WARM_UP_MS = 5_000;

export interface ApiOptions {
  /**
   * Runs on this client instead of a pool of its own (a test database, shared with the test's
   * fixtures); the caller closes it.
   */
  database?: DatabaseClient;
}

export interface Api {
  app: ReturnType<typeof createApp>;
  deps: AppDeps;
  /** Closes what `buildApi` opened, in reverse order. */
  close: () => Promise<void>;
}

/**
 * One API process's clients, caches and services, and the app over them: the only wiring of the
 * API. `main.ts` adds the HTTP server and signal handling; the test harness a server on an
 * ephemeral port, so tests run exactly this.
 */
export async function buildApi(env: Env, logger: Logger, options: ApiOptions = {}): Promise<Api> {
  const shutdown = new ShutdownManager(logger);
  try {
    let database = options.database;
    if (!database) {
      database = createDatabase(env.DATABASE_URL, { max: DATABASE_POOL_SIZE, limits: API_CONNECTION_LIMITS });
      shutdown.register("postgres", database.close);
    }
    let readDb = database.db;
    if (env.DATABASE_READ_URL) {
      const replica = createDatabase(env.DATABASE_READ_URL, { max: DATABASE_POOL_SIZE, limits: API_CONNECTION_LIMITS });
      shutdown.register("postgres replica", replica.close);
      readDb = replica.db;
    }
    const redis = createRequestRedis(env, REQUEST_REDIS_OPTIONS);
    shutdown.register("redis", () => closeRedis(redis));
    // The request path's scripts are defined before the first request: a command defined while an
    // auto-pipeline already gathers others is missing from it, which fails that call and crashes
    // ioredis (redis/ioredis#1931; apps/api/src/redis-scripts.test.ts).
    withDraws(redis);
    withGiveBack(redis);
    withWindowedGcra(redis);
    // On a cluster a master's connection opens at its first command, and with no offline queue a
    // command for a node still connecting is refused: the first spins of a fresh process would fail.
    // Open them before serving; Redis down does not stop the start (spins fail as unavailable until it is back).
    await Promise.race([untilReady(redis), sleep(REDIS_WARM_UP_MS, undefined, { ref: false })]).catch(
      (error: unknown) => logger.warn({ err: error }, "Redis is not ready; spins fail as unavailable until it is"),
    );
    const queueRedis = createWorkerRedis(env);
    shutdown.register("queue redis", () => queueRedis.quit());
    const producers = new Producers(queueRedis, env.REDIS_PREFIX);
    shutdown.register("producers", () => producers.close());

    const keys = redisKeys(env.REDIS_PREFIX);
    const keyVerifier = new KeyVerifier(database.db, env.ALLOWED_ENVIRONMENTS as Environment[], (error) =>
      logger.warn({ err: error }, "lastUsedAt update failed"),
    );
    const maintenance = new MaintenanceSwitch(redis, keys);
    const games = new GameCache(database.db, usdToMicros(env.LARGE_WIN_THRESHOLD_USD) ?? 0);
    const rollout = new RolloutSwitch(database.db);
    const subscriber = await subscribeInvalidations(env, keys, { keyVerifier, maintenance, games, rollout }, logger);
    shutdown.register("invalidation subscriber", () => subscriber.quit());

    const limiter = new RateLimiter(new TurnDraws(redis), keys, {
      spin: env.RATE_LIMIT_SPINS_PER_SECOND,
      default: env.RATE_LIMIT_REQUESTS_PER_SECOND,
    });

    const services = {
      env,
      db: database.db,
      readDb,
      redis,
      keys,
      producers,
      logger,
      keyVerifier,
      maintenance,
      games,
      rollout,
      limiter,
    };
    const creates = new KeyedCreates(database.db);
    const deps: AppDeps = {
      ...services,
      spins: spinService(services),
      voids: voidService(services),
      grants: new GrantService({
        games,
        creates,
        createGrant: createFreeRoundGrant,
        now: Date.now,
      }),
      creates,
      revealedPages: revealedPageCache(),
      replayLinks: new ReplayLinks(database.db, env.REPLAY_SECRETS),
      clientAddress: clientAddresses(env.TRUSTED_PROXIES),
    };
    return { app: createApp(deps), deps, close: () => shutdown.shutdown() };
  } catch (error) {
    // A start-up that fails half-way closes what it had opened.
    await shutdown.shutdown();
    throw error;
  }
}

/** Voids over this process's pool: each in a transaction of its own, the outbox poked after it. */
function voidService({ env, db, producers }: Services): VoidService {
  return new VoidService({
    inTransaction: (work) =>
      db.transaction((tx) =>
        work({
          lockForVoid: (owner, spinId) => lockSpinForVoid(tx, owner, spinId),
          recordVoid: (found, reason) => recordSpinVoid(tx, found, reason),
        }),
      ),
    windowHours: env.VOID_WINDOW_HOURS,
    eventsWritten: () => void notifyEvents(producers),
  });
}

/** The spin pipeline over this process's clients: its stages, caches and signals. */
function spinService(deps: Services): SpinService {
  const { env, db, redis, keys, producers, logger, limiter } = deps;
  // The spin path's own statements are prepared on postgres.js directly (see `SqlClient`).
  const sql = sqlClientOf(db);
  // One pending generation job per game, however many spins ask for it at once (see enqueueGeneration).
  const generationNeeded = async (gameId: number) => {
    await enqueueGeneration(producers, gameId).catch((error: unknown) =>
      logger.error({ err: error, gameId }, "could not request block generation"),
    );
  };
  return new SpinService({
    games: deps.games,
    freeRounds: new FreeRoundCache(db),
    taker: new OutcomeTaker(limiter, redis, keys),
    planner: new SpinPlanner(new BlockFactsCache(), new ForcedOutcomes(), sql),
    commits: new GroupCommit(sql, {
      maxSize: env.SPIN_BATCH_MAX_SIZE,
      maxWaitMs: env.SPIN_BATCH_MAX_WAIT_MS,
      minReadyBlocks: env.MIN_READY_BLOCKS,
    }),
    findRecord: (scope) => findIdempotencyRecord(sql, scope),
    checksOn: () => deps.rollout.on("jurisdictions"),
    signals: {
      eventsWritten: () => void notifyEvents(producers),
      generationNeeded,
      spinCommitted: (spin) =>
        countSpin({
          gameId: spin.gameId,
          tier: spin.outcome.tier,
          wagerMicros: spin.wagerMicros,
          payoutMicros: spin.payoutMicros,
        }),
      spinRefused: (partner, code) =>
        void countSpinRefusal(db, partner, code).catch((error: unknown) =>
          logger.warn({ err: error, errorCode: code }, "refused spin not counted"),
        ),
    },
    logger,
  });
}
