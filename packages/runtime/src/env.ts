import { ENVIRONMENTS, WEBHOOK_MAX_ATTEMPTS } from "@outcomes/core";
import { z } from "zod";

const csvOf = <T extends z.ZodType>(item: T) =>
  z
    .string()
    .transform((text) => text.split(",").map((part) => part.trim()))
    .pipe(z.array(item as unknown as z.ZodType<z.output<T>, string>).min(1));

/** Timers (setTimeout) take at most 2^31 − 1 ms; a longer one fires at once. */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * A whole number in plain digits (spaces around it allowed) within [min, max]. `Number()` would also
 * take `0x10`, `1e3`, `2.0` or a lone space (0): a typo must stop the process, not become a value.
 */
const intIn = (min: number, max: number) =>
  z
    .string()
    .trim()
    .regex(/^\d+$/, "must be a whole number in plain digits")
    .transform(Number)
    .pipe(z.number().min(min).max(max));

const positiveInt = intIn(1, Number.MAX_SAFE_INTEGER);

/** `host:port` of one Redis Cluster node (an IPv6 address in brackets: `[::1]:7000`). */
const clusterNode = z
  .string()
  .regex(/^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):\d{1,5}$/, "must be host:port, comma-separated")
  .transform((text) => {
    const colon = text.lastIndexOf(":");
    return { host: text.slice(0, colon).replace(/^\[(.*)\]$/, "$1"), port: Number(text.slice(colon + 1)) };
  })
  .refine((node) => node.port >= 1 && node.port <= 65535, "port must be 1-65535");
const durationMs = intIn(1, MAX_TIMER_MS);

/**
 * A USD amount as money is kept: positive, at most 6 decimals, below a billion. Up to 15 significant
 * digits a decimal survives the trip through a double, so the value is exactly its micro-USD.
 */
const usdAmount = z
  .string()
  .trim()
  .regex(/^\d{1,9}(\.\d{1,6})?$/, "must be a USD amount below 1000000000 with at most 6 decimals")
  .transform(Number)
  .pipe(z.number().positive("must be positive"));

/** Every variable the service reads, with its default and why it exists. Processes pick what they need. */
const envSchema = z.object({
  /** Postgres, the record of everything. */
  DATABASE_URL: z.url().default("postgres://postgres@127.0.0.1:5432/outcomes"),
  /**
   * A streaming replica of DATABASE_URL: the API reads its lag-tolerant listings there (player
   * spins, the event log, settlement and delivery lists; docs/partitioning.md). Unset: the primary.
   */
  DATABASE_READ_URL: z.url().optional(),
  /** Redis: outcome queues, rate-limit counters, BullMQ. */
  REDIS_URL: z.url().default("redis://127.0.0.1:6379"),
  /**
   * Seed nodes of a Redis Cluster (`host:port,…`); set, every process uses the cluster instead of
   * REDIS_URL (docs/redis-cluster.md).
   */
  REDIS_CLUSTER_NODES: csvOf(clusterNode).optional(),
  /** Prefix of every Redis key this deployment owns (lets tests and deployments share one Redis). */
  REDIS_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_:-]+$/)
    .default("ks"),
  /** API port. */
  PORT: intIn(0, 65535).default(3000),
  /** API processes sharing PORT (node:cluster); each has its own connection pools. */
  WEB_CONCURRENCY: intIn(1, 64).default(1),
  /**
   * The API's Prometheus listener (`/metrics`, `/healthz`), never on PORT (CONTRACT §1); 0 turns it
   * off. Taken by another process: a free port instead, logged at warn level (as the worker's).
   */
  API_METRICS_PORT: intIn(0, 65535).default(9464),
  /** How long a client may take to send a request's headers; then the connection is closed. */
  HTTP_HEADERS_TIMEOUT_MS: durationMs.default(10_000),
  /** How long a client may take to send a whole request, body included; then the connection is closed. */
  HTTP_REQUEST_TIMEOUT_MS: durationMs.default(30_000),
  /** Open connections one API process holds at most; more are closed as they arrive. */
  HTTP_MAX_CONNECTIONS: positiveInt.default(10_000),
  /** Bearer token of the operator API and dashboard; unset means the operator plane answers 503. */
  ADMIN_TOKEN: z.string().min(16).optional(),
  /** Environments this deployment serves; keys of another get KS-4002. */
  ALLOWED_ENVIRONMENTS: csvOf(z.enum(ENVIRONMENTS)).default([...ENVIRONMENTS]),
  /** Outcomes per generated block. */
  BLOCK_SIZE: intIn(1, 1_000_000).default(10_000),
  /** Below this many ready blocks: `block.low_reserve` and automatic generation. */
  MIN_READY_BLOCKS: positiveInt.default(2),
  /** Generation refills a game to this many ready blocks. */
  TARGET_READY_BLOCKS: positiveInt.default(4),
  /** Waits between the webhook attempts, in milliseconds: one fewer than WEBHOOK_MAX_ATTEMPTS. */
  WEBHOOK_RETRY_DELAYS_MS: csvOf(intIn(0, MAX_TIMER_MS))
    .refine(
      (delays) => delays.length === WEBHOOK_MAX_ATTEMPTS - 1,
      `needs exactly ${WEBHOOK_MAX_ATTEMPTS - 1} delays (${WEBHOOK_MAX_ATTEMPTS} attempts)`,
    )
    .default([60_000, 300_000, 900_000, 3_600_000]),
  /** How long a webhook receiver may take to answer. */
  WEBHOOK_TIMEOUT_MS: durationMs.default(5_000),
  /**
   * Ports a sandbox webhook may reach on loopback (`http://localhost:<port>`; CONTRACT §7 allows
   * any): unset, any port (local development); `none`, no loopback webhooks; else the listed ports.
   * A deployment whose loopback runs other services (Postgres, Redis, the API) sets it.
   */
  SANDBOX_LOOPBACK_PORTS: z
    .union([z.literal("none").transform(() => [] as number[]), csvOf(intIn(1, 65535))])
    .optional(),
  /**
   * A webhook whose every attempt failed for this many hours (and at least 10 attempts) is disabled
   * (CONTRACT §18; 120 = 5 days, as Svix).
   */
  WEBHOOK_DISABLE_AFTER_HOURS: intIn(1, 8760).default(120),
  /**
   * Load balancers whose `X-Forwarded-For` names the client (addresses or CIDR ranges). Unset: the
   * socket's peer is the client, and the header is ignored (anyone can write it).
   */
  TRUSTED_PROXIES: csvOf(z.union([z.ipv4(), z.ipv6(), z.cidrv4(), z.cidrv6()])).default([]),
  /** Spin requests per second, per partner and environment. */
  RATE_LIMIT_SPINS_PER_SECOND: positiveInt.default(100),
  /** Other partner requests per second, per partner and environment. */
  RATE_LIMIT_REQUESTS_PER_SECOND: positiveInt.default(20),
  /**
   * Group commit of spins: at most this many spins per transaction (1 turns batching off: each spin
   * commits alone).
   */
  SPIN_BATCH_MAX_SIZE: intIn(1, 1_000).default(64),
  /** Group commit: how long the first spin of a batch waits for others before the batch commits. */
  SPIN_BATCH_MAX_WAIT_MS: intIn(0, 1_000).default(2),
  /** Large-win threshold for games that set none (checked here: a bad one would fail every spin). */
  LARGE_WIN_THRESHOLD_USD: usdAmount.default(1000),
  /** How long after its `createdAt` a partner can void a spin (CONTRACT §13); later: 409 KS-4217. */
  VOID_WINDOW_HOURS: intIn(1, 720).default(72),
  /**
   * Secrets that sign replay links (CONTRACT §17), comma-separated, 32+ characters each: the first
   * signs, every one is accepted, so a rotation puts the new one first and keeps the old one until
   * its links have expired. Unset: one secret generated once and kept in Postgres (docs/fairness.md).
   */
  REPLAY_SECRETS: csvOf(z.string().min(32, "each secret needs at least 32 characters")).optional(),
  /** Replay page and JSON requests per minute, per client address (CONTRACT §17). */
  REPLAY_RATE_LIMIT_PER_MINUTE: intIn(1, 1_000_000).default(60),
  /**
   * The address players and partners reach this deployment at (`https://outcomes.example.com`),
   * which replay links start with. Unset: the address the request for the link was sent to.
   */
  PUBLIC_BASE_URL: z
    .url()
    .refine((url) => /^https?:\/\//.test(url), "must be an http(s) address")
    .transform((url) => url.replace(/\/+$/, ""))
    .optional(),
  /** Daily settlement generation (UTC) for the previous UTC day. */
  SETTLEMENT_CRON: z.string().min(1).default("0 2 * * *"),
  /** Key-expiry notice sweep (UTC). */
  KEY_EXPIRY_CRON: z.string().min(1).default("0 * * * *"),
  /**
   * BullMQ job lock of every worker role (lockDuration; the stalled-job check runs as often). A worker
   * that dies mid-job loses its jobs to another worker within about twice this.
   */
  WORKER_JOB_LOCK_MS: durationMs.default(30_000),
  /** Worker Prometheus port (0 picks a free one). */
  WORKER_METRICS_PORT: intIn(0, 65535).default(9100),
  /** pino level. */
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
});

/** Rules across variables. */
const checkedEnvSchema = envSchema
  .refine((env) => env.TARGET_READY_BLOCKS >= env.MIN_READY_BLOCKS, {
    path: ["TARGET_READY_BLOCKS"],
    message: "must be at least MIN_READY_BLOCKS: generation would stop below the low-reserve line",
  })
  .refine((env) => env.HTTP_HEADERS_TIMEOUT_MS <= env.HTTP_REQUEST_TIMEOUT_MS, {
    path: ["HTTP_HEADERS_TIMEOUT_MS"],
    message: "must be at most HTTP_REQUEST_TIMEOUT_MS: the headers are part of the request",
  });

export type Env = z.infer<typeof envSchema>;

export class EnvError extends Error {}

/** Parses the environment; a bad value throws naming each variable at fault. */
export function parseEnv(source: Record<string, string | undefined> = process.env): Env {
  const cleaned = Object.fromEntries(Object.entries(source).filter(([, value]) => value !== ""));
  const result = checkedEnvSchema.safeParse(cleaned);
  if (!result.success) {
    const problems = result.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`);
    throw new EnvError(`Invalid environment: ${problems.join("; ")}`);
  }
  return result.data;
}

/** For process entry points: parse or stop the process with the message. */
export function loadEnvOrExit(): Env {
  try {
    return parseEnv();
  } catch (error) {
    if (error instanceof EnvError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}
