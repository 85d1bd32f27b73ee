import type { HostResolver } from "@outcomes/core";
import type { Database, ReplayLinks, RolloutSwitch } from "@outcomes/db";
import type { Producers, RedisClient, RedisKeys } from "@outcomes/queue";
import type { Logger, Env as ServiceEnv } from "@outcomes/runtime";
import type { Context } from "hono";
import type { KeyVerifier, PartnerAuth } from "./auth/key-verifier.js";
import type { ByteBoundedCache } from "./byte-bounded-cache.js";
import type { GrantService } from "./free-rounds/grant-service.js";
import type { KeyedCreates } from "./idempotency.js";
import type { MaintenanceSwitch } from "./middleware/maintenance.js";
import type { Decision, RateLimiter } from "./ratelimit/index.js";
import type { GameCache } from "./spins/game-cache.js";
import type { SpinService } from "./spins/spin-service.js";
import type { VoidService } from "./voids/void-service.js";

/** Everything a request handler may use; built once per process by buildApi (build-api.ts). */
export interface AppDeps {
  env: ServiceEnv;
  db: Database;
  /**
   * Listings that may lag the primary by the replication delay (DATABASE_READ_URL; `db` when
   * unset). Nothing a request has just written is read back from here.
   */
  readDb: Database;
  redis: RedisClient;
  keys: RedisKeys;
  producers: Producers;
  logger: Logger;
  keyVerifier: KeyVerifier;
  maintenance: MaintenanceSwitch;
  /** Whether a release gate is open (docs/upgrades.md): `await rollout.on("name")`. */
  rollout: RolloutSwitch;
  /** Every partner request's draw from its bucket (CONTRACT §9). */
  limiter: RateLimiter;
  /** The rules spins follow, per game; PATCH /games forgets an entry before it answers. */
  games: GameCache;
  /** The spin path (POST /spins); it holds the process's group-commit batcher. */
  spins: SpinService;
  /** Voids (POST /spins/{spinId}/void). */
  voids: VoidService;
  /** Free-round grants (POST /free-rounds). */
  grants: GrantService;
  /** Every create, keyed by its `Idempotency-Key` or not (`createOnce`). */
  creates: KeyedCreates;
  /** Serialised pages of revealed blocks' entries (routes/partner/revealed-pages.ts). */
  revealedPages: ByteBoundedCache;
  /** Makes and opens replay links (CONTRACT §17) with the deployment's secrets. */
  replayLinks: ReplayLinks;
  /** The client address a request is counted against (auth/client-address.ts, TRUSTED_PROXIES). */
  clientAddress: (c: Context) => string;
  /** DNS for webhook URL checks; the OS resolver when absent (tests set one, needing no DNS). */
  resolveHost?: HostResolver;
}

export interface AppEnv {
  Variables: {
    requestId: string;
    deps: AppDeps;
    partner: PartnerAuth;
    /** A partner request's rate-limit decision, once drawn (the access log keeps spins at debug level). */
    rateLimit: Decision;
  };
}
