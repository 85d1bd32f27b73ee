import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";

/**
 * Prometheus metrics of one process. Counters live in the process that does the work (the API
 * counts spins, the blocks worker counts generated outcomes); Prometheus sums them across
 * processes. Gauges that describe shared state (reserve, queue depths) are read from
 * Postgres/Redis/BullMQ on each scrape, so any process may serve them and they never drift.
 */
export const metricsRegistry = new Registry();

const registers = [metricsRegistry];

/** A counter in the process's registry. */
function counter<L extends string>(name: string, help: string, labelNames: readonly L[]): Counter<L> {
  return new Counter({ name, help, labelNames, registers });
}

/** A histogram in the process's registry, with its buckets. */
function histogram(name: string, help: string, options: { buckets: number[] }): Histogram {
  return new Histogram({ name, help, ...options, registers });
}

export const metrics = {
  httpRequestDuration: new Histogram({
    name: "outcomes_http_request_duration_seconds",
    help: "HTTP request duration by method, route pattern and status",
    labelNames: ["method", "route", "status"] as const,
    buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers,
  }),
  rateLimitRejections: counter(
    "outcomes_rate_limit_rejections_total",
    "Partner requests refused with 429, by bucket (spin, default, or unknown_key: an address past its unknown-key look-ups)",
    ["bucket"],
  ),
  spins: counter("outcomes_spins_total", "Committed spins by game and prize tier", ["game_id", "tier"]),
  wageredMicros: counter("outcomes_wagered_micros_total", "Wagers of committed spins in micro-USD, by game", [
    "game_id",
  ]),
  payoutMicros: counter("outcomes_payout_micros_total", "Payouts of committed spins in micro-USD, by game", [
    "game_id",
  ]),
  blocksGenerated: counter("outcomes_blocks_generated_total", "Outcome blocks sealed, by game", ["game_id"]),
  blockOutcomesGenerated: counter(
    "outcomes_block_outcomes_generated_total",
    "Outcomes generated into sealed blocks, by game",
    ["game_id"],
  ),
  webhookDeliveryAttempts: counter(
    "outcomes_webhook_delivery_attempts_total",
    "Webhook delivery attempts by resulting delivery status and attempt number",
    ["status", "attempt"],
  ),
  spinBatchSize: histogram("outcomes_spin_batch_size", "Spins per group commit", {
    buckets: [1, 2, 4, 8, 16, 32, 64, 128],
  }),
  spinBatchSeconds: histogram(
    "outcomes_spin_batch_seconds",
    "Group commits from their flush to Postgres's answer (waiting for a pool connection included)",
    { buckets: [0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1] },
  ),
  spinBatchReruns: counter(
    "outcomes_spin_batch_reruns_total",
    "Group commits run again: whole, after Postgres chose them as a deadlock's victim (conflict), or in halves, after one of their spins was refused (split)",
    ["reason"],
  ),
  collectErrors: counter(
    "outcomes_metrics_collect_errors_total",
    "Scrape-time readings that failed (the gauge is left empty for that scrape)",
    ["collector"],
  ),
};

/** One committed spin: one call at the spin's commit. Money is integer micro-USD. */
export function countSpin(spin: { gameId: number; tier: string; wagerMicros: number; payoutMicros: number }): void {
  const gameId = String(spin.gameId);
  metrics.spins.inc({ game_id: gameId, tier: spin.tier });
  metrics.wageredMicros.inc({ game_id: gameId }, spin.wagerMicros);
  metrics.payoutMicros.inc({ game_id: gameId }, spin.payoutMicros);
}

/** One sealed block of `outcomes` entries. */
export function countBlockGenerated(gameId: number, outcomes: number): void {
  metrics.blocksGenerated.inc({ game_id: String(gameId) });
  metrics.blockOutcomesGenerated.inc({ game_id: String(gameId) }, outcomes);
}

/** One finished delivery attempt; `status` is the delivery's status after it (succeeded, retrying, failed). */
export function countWebhookAttempt(status: string, attempt: number): void {
  metrics.webhookDeliveryAttempts.inc({ status, attempt: String(attempt) });
}

export interface ReserveReading {
  gameId: number;
  readyBlocks: number;
  remainingOutcomes: number;
}

export interface PartitionReading {
  table: string;
  /** How far ahead of now the table's partitions reach without a gap; 0 when now has none. */
  aheadSeconds: number;
}

export interface QueueReading {
  queue: string;
  /** Job counts by BullMQ state (waiting, active, delayed, failed, …). */
  counts: Record<string, number>;
}

type Reader<T> = () => Promise<T[]>;
const readers: {
  reserve?: Reader<ReserveReading>;
  queues?: Reader<QueueReading>;
  partitions?: Reader<PartitionReading>;
} = {};

/**
 * A scrape collects every gauge concurrently; gauges fed by one reading share the in-flight
 * promise, so a scrape costs one query per source. A failed reading leaves the gauges empty for
 * that scrape and is counted.
 */
function sharedReading<T>(collector: string, reader: () => Reader<T> | undefined): () => Promise<T[]> {
  let inFlight: Promise<T[]> | undefined;
  const readSafely = async (): Promise<T[]> => {
    const read = reader();
    if (!read) return [];
    try {
      return await read();
    } catch {
      metrics.collectErrors.inc({ collector });
      return [];
    }
  };
  return () => {
    inFlight ??= readSafely().finally(() => {
      inFlight = undefined;
    });
    return inFlight;
  };
}

const readReserve = sharedReading("reserve", () => readers.reserve);
const readQueues = sharedReading("queues", () => readers.queues);
const readPartitions = sharedReading("partitions", () => readers.partitions);

/**
 * A gauge of shared state read at scrape time: every API process on a port reads the same value, so
 * the gathering keeps one; reset before each reading so a row that is gone disappears from the exposition.
 */
function scrapedGauge<L extends string, T>(
  config: { name: string; help: string; labelNames: readonly L[] },
  read: () => Promise<T[]>,
  record: (gauge: Gauge<L>, row: T) => void,
): Gauge<L> {
  const gauge: Gauge<L> = new Gauge({
    ...config,
    registers,
    aggregator: "first",
    async collect() {
      const rows = await read();
      gauge.reset();
      for (const row of rows) record(gauge, row);
    },
  });
  return gauge;
}

function reserveGauge(name: string, help: string, value: (row: ReserveReading) => number) {
  return scrapedGauge({ name, help, labelNames: ["game_id"] as const }, readReserve, (gauge, row) =>
    gauge.set({ game_id: String(row.gameId) }, value(row)),
  );
}

reserveGauge(
  "outcomes_reserve_ready_blocks",
  "Sealed blocks not yet started, by game (read at scrape time)",
  (row) => row.readyBlocks,
);
reserveGauge(
  "outcomes_reserve_remaining_outcomes",
  "Outcomes queued for serving, by game (read at scrape time)",
  (row) => row.remainingOutcomes,
);
scrapedGauge(
  {
    name: "outcomes_queue_jobs",
    help: "BullMQ jobs by queue and state (read at scrape time)",
    labelNames: ["queue", "state"] as const,
  },
  readQueues,
  (gauge, row) => {
    for (const [state, count] of Object.entries(row.counts)) gauge.set({ queue: row.queue, state }, count);
  },
);
scrapedGauge(
  {
    name: "outcomes_partitions_ahead_seconds",
    help: "How far ahead of now each time-partitioned table's partitions reach (read at scrape time); the key-expiry role keeps 7 days: alert well before 0",
    labelNames: ["table"] as const,
  },
  readPartitions,
  (gauge, row) => gauge.set({ table: row.table }, row.aheadSeconds),
);

/** Where the reserve gauges read from (set by the process that serves them: the API). */
export function observeReserve(read: Reader<ReserveReading>): void {
  readers.reserve = read;
}

/** Where the queue-depth gauge reads from. */
export function observeQueues(read: Reader<QueueReading>): void {
  readers.queues = read;
}

/** Where the partitions-ahead gauge reads from. */
export function observePartitions(read: Reader<PartitionReading>): void {
  readers.partitions = read;
}

let defaultsStarted = false;
/** Process metrics (CPU, memory, event loop lag, GC), once per process. */
export function collectProcessMetrics(): void {
  if (defaultsStarted) return;
  defaultsStarted = true;
  collectDefaultMetrics({ register: metricsRegistry, prefix: "outcomes_" });
}

/** The exposition text and its content type, for any HTTP server. */
export async function renderMetrics(): Promise<{ contentType: string; body: string }> {
  return { contentType: metricsRegistry.contentType, body: await metricsRegistry.metrics() };
}
