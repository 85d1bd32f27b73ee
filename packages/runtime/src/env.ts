import { z } from "zod";

const csvOf = <T extends z.ZodType>(item: T) =>
  z
    .string()
    .transform((text) => text.split(",").map((part) => part.trim()))
    .pipe(z.array(item as unknown as z.ZodType<z.output<T>, string>).min(1));

const positiveInt = z.coerce.number().int().positive();

/** Every variable the service reads, with its default and why it exists. Processes pick what they need. */
const envSchema = z.object({
  /** Postgres, the record of everything. */
  DATABASE_URL: z.url().default("postgres://postgres@127.0.0.1:5432/outcomes"),
  /** Redis: outcome queues, rate-limit counters, BullMQ. */
  REDIS_URL: z.url().default("redis://127.0.0.1:6379"),
  /** Prefix of every Redis key this deployment owns (lets tests and deployments share one Redis). */
  REDIS_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_:-]+$/)
    .default("ks"),
  /** API port. */
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  /** Bearer token of the operator API and dashboard; unset means the operator plane answers 503. */
  ADMIN_TOKEN: z.string().min(16).optional(),
  /** Environments this deployment serves; keys of another get KS-4002. */
  ALLOWED_ENVIRONMENTS: csvOf(z.enum(["sandbox", "production"])).default(["sandbox", "production"]),
  /** Outcomes per generated block. */
  BLOCK_SIZE: positiveInt.max(1_000_000).default(10_000),
  /** Below this many ready blocks: `block.low_reserve` and automatic generation. */
  MIN_READY_BLOCKS: positiveInt.default(2),
  /** Generation refills a game to this many ready blocks. */
  TARGET_READY_BLOCKS: positiveInt.default(4),
  /** Waits between the 5 webhook attempts, in milliseconds. */
  WEBHOOK_RETRY_DELAYS_MS: csvOf(z.coerce.number().int().nonnegative())
    .refine((delays) => delays.length === 4, "needs exactly 4 delays (5 attempts)")
    .default([60_000, 300_000, 900_000, 3_600_000]),
  /** How long a webhook receiver may take to answer. */
  WEBHOOK_TIMEOUT_MS: positiveInt.default(5_000),
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
  SPIN_BATCH_MAX_SIZE: positiveInt.max(1_000).default(64),
  /** Group commit: how long the first spin of a batch waits for others before the batch commits. */
  SPIN_BATCH_MAX_WAIT_MS: z.coerce.number().int().min(0).max(1_000).default(2),
  /** Large-win threshold for games that set none. */
  LARGE_WIN_THRESHOLD_USD: z.coerce.number().positive().default(1000),
  /** Daily settlement generation (UTC) for the previous UTC day. */
  SETTLEMENT_CRON: z.string().min(1).default("0 2 * * *"),
  /** Key-expiry notice sweep (UTC). */
  KEY_EXPIRY_CRON: z.string().min(1).default("0 * * * *"),
  /**
   * BullMQ job lock of every worker role (lockDuration; the stalled-job check runs as often). A worker
   * that dies mid-job loses its jobs to another worker within about twice this.
   */
  WORKER_JOB_LOCK_MS: positiveInt.default(30_000),
  /** Worker Prometheus port (0 picks a free one). */
  WORKER_METRICS_PORT: z.coerce.number().int().min(0).max(65535).default(9100),
  /** pino level. */
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
});

export type Env = z.infer<typeof envSchema>;

export class EnvError extends Error {}

/** Parses the environment; a bad value throws naming each variable at fault. */
export function parseEnv(source: Record<string, string | undefined> = process.env): Env {
  const cleaned = Object.fromEntries(Object.entries(source).filter(([, value]) => value !== ""));
  const result = envSchema.safeParse(cleaned);
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
