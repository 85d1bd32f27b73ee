import cluster, { type Worker } from "node:cluster";
import {
  type Env,
  type Logger,
  listenForMetricsOrExit,
  metricsRegistry,
  type ShutdownManager,
} from "@outcomes/runtime";
import { AggregatorRegistry } from "prom-client";
import { DEATH_WINDOW_MS, MAX_DEATHS, RestartPolicy } from "./restart-policy.js";

/**
 * `WEB_CONCURRENCY` > 1: one primary process forks that many API processes sharing one port
 * (node:cluster hands connections round-robin). The primary serves no request; it replaces an API
 * process that dies after it listened (after a growing delay, and stops with exit 1 when they keep
 * dying: restart-policy.ts), stops everything when one cannot start (a taken port, a bad
 * database), drives graceful shutdown, and answers `API_METRICS_PORT` with the metrics of every API
 * process, so one scrape sees the whole port.
 */

const SHUTDOWN = "outcomes:shutdown";

type Message = { type: typeof SHUTDOWN };

function isMessage(value: unknown): value is Message {
  return typeof value === "object" && value !== null && typeof (value as { type?: unknown }).type === "string";
}

export async function runPrimary(env: Env, logger: Logger): Promise<void> {
  const processes = env.WEB_CONCURRENCY;
  const aggregator = new AggregatorRegistry();
  if (env.API_METRICS_PORT !== 0) {
    // prom-client asks every process for its registry and sums them (the scrape-time gauges, read
    // by each, are reported once: their aggregator is `first`).
    await listenForMetricsOrExit("API_METRICS_PORT", env.API_METRICS_PORT, logger, async () => ({
      contentType: aggregator.contentType,
      body: await aggregator.clusterMetrics(),
    }));
  }
  const alive = new Map<number, Worker>();
  /** When each process that serves began to (its `listening`), by worker id. */
  const listening = new Map<number, number>();
  const restarts = new RestartPolicy();
  /** Replacements waiting out their delay; a shutdown cancels them. */
  const pendingForks = new Set<NodeJS.Timeout>();
  let stopping: { code: number } | undefined;

  const fork = () => {
    const worker = cluster.fork();
    alive.set(worker.id, worker);
    worker.on("listening", () => {
      listening.set(worker.id, Date.now());
      if (listening.size === processes) logger.info({ processes }, "api processes listening");
    });
  };

  const stopAll = (code: number) => {
    if (stopping) return;
    stopping = { code };
    for (const timer of pendingForks) clearTimeout(timer);
    pendingForks.clear();
    for (const worker of alive.values()) {
      // One that serves is told over IPC, so a Ctrl-C that also reached it directly counts once.
      // One still starting has served nothing and may not listen for messages yet; it is killed
      // (a graceful close racing its pending listen throws inside node:cluster).
      if (listening.has(worker.id) && worker.isConnected()) worker.send({ type: SHUTDOWN });
      else worker.process.kill("SIGKILL");
    }
    if (alive.size === 0) process.exit(code);
  };

  cluster.on("exit", (worker, code, signal) => {
    alive.delete(worker.id);
    const listenedAt = listening.get(worker.id);
    listening.delete(worker.id);
    if (stopping) {
      if (alive.size === 0) process.exit(stopping.code);
      return;
    }
    const pid = worker.process.pid;
    if (listenedAt === undefined) {
      // It never served: a replacement would fail the same way (taken port, bad configuration).
      logger.fatal({ pid, code, signal }, "an api process could not start; stopping");
      stopAll(1);
      return;
    }
    const now = Date.now();
    const delayMs = restarts.afterDeath(now, now - listenedAt);
    const cause = signal ? `signal ${signal}` : `exit code ${code}`;
    if (delayMs === null) {
      logger.fatal(
        { pid, code, signal, deaths: MAX_DEATHS, windowMs: DEATH_WINDOW_MS },
        `api processes keep dying: ${MAX_DEATHS} within ${DEATH_WINDOW_MS / 1000} s, the last by ${cause}; stopping`,
      );
      stopAll(1);
      return;
    }
    logger.error({ pid, code, signal, delayMs }, `an api process died (${cause}); starting another in ${delayMs} ms`);
    const timer = setTimeout(() => {
      pendingForks.delete(timer);
      fork();
    }, delayMs);
    pendingForks.add(timer);
  });

  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      logger.warn({ signal }, "second signal, stopping the api processes now");
      for (const worker of alive.values()) worker.process.kill("SIGKILL");
      process.exit(1);
    }
    logger.info({ signal, processes: listening.size }, "shutting down the api processes");
    stopAll(0);
  };
  process.on("SIGTERM", () => onSignal("SIGTERM"));
  process.on("SIGINT", () => onSignal("SIGINT"));

  for (let index = 0; index < processes; index++) fork();
}

/**
 * An API process started by the primary: it answers the primary's metrics gathering and shuts down
 * gracefully when told (a signal sent to the whole process group, as Ctrl-C does, is handled once).
 */
export function joinPrimary(shutdown: ShutdownManager): void {
  AggregatorRegistry.setRegistries([metricsRegistry]);
  new AggregatorRegistry(); // installs prom-client's answer to the primary's gathering
  process.on("message", (message: unknown) => {
    if (isMessage(message) && message.type === SHUTDOWN) void shutdown.shutdown().then(() => process.exit(0));
  });
}
