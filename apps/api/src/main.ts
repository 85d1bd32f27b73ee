import cluster from "node:cluster";
import {
  createLogger,
  type Env,
  type Logger,
  listenErrorMessage,
  listenForMetricsOrExit,
  loadEnvOrExit,
  ShutdownManager,
} from "@outcomes/runtime";
import { joinPrimary, runPrimary } from "./api-cluster.js";
import { buildApi } from "./build-api.js";
import { serveApi } from "./http-server.js";

const env = loadEnvOrExit();
if (env.WEB_CONCURRENCY > 1 && cluster.isPrimary) {
  const logger = createLogger(env.LOG_LEVEL, "api-primary");
  warnWithoutTrustedProxies(env, logger);
  await runPrimary(env, logger);
} else {
  await startApiProcess();
}

/**
 * Once per API start (the primary's, or the one process's): without TRUSTED_PROXIES a load balancer's
 * address is every partner's, so one client's made-up keys cost them all the unknown-key allowance.
 */
function warnWithoutTrustedProxies({ TRUSTED_PROXIES }: Env, logger: Logger) {
  if (TRUSTED_PROXIES.length > 0) return;
  logger.warn(
    "TRUSTED_PROXIES is unset: each client is its connection's peer address and X-Forwarded-For is ignored, " +
      "so behind a load balancer or proxy every partner shares one address, and 20 unknown API keys a minute " +
      "from any of them hold up (429 KS-4292) keys not yet known to exist; set it to the proxies' addresses",
  );
}

async function startApiProcess() {
  const logger = createLogger(env.LOG_LEVEL, "api");
  if (cluster.isPrimary) warnWithoutTrustedProxies(env, logger);
  const shutdown = new ShutdownManager(logger);
  shutdown.installSignalHandlers();
  // The metrics port is the primary's in a cluster (it answers for every process); else this
  // process's, registered first so it closes last: Prometheus can scrape the process while it drains.
  if (cluster.isWorker) joinPrimary(shutdown);
  else if (env.API_METRICS_PORT !== 0) {
    const metrics = await listenForMetricsOrExit("API_METRICS_PORT", env.API_METRICS_PORT, logger);
    shutdown.register("metrics server", metrics.close);
  }

  const api = await buildApi(env, logger);
  shutdown.register("api", api.close);
  const server = serveApi(api.app, env, logger, { port: env.PORT }, (info) =>
    logger.info({ port: info.port }, "api listening"),
  );
  // Two APIs on one port is a mistake: one line naming PORT and exit 1, not an uncaught stack.
  server.once("error", (error: NodeJS.ErrnoException) => {
    // An API process of a cluster (WEB_CONCURRENCY) learns of a taken port from the primary's bind.
    if (error.syscall !== "listen" && error.syscall !== "bind") throw error;
    logger.fatal({ port: env.PORT }, listenErrorMessage("PORT", env.PORT, error));
    void shutdown.shutdown().finally(() => process.exit(1));
  });
  shutdown.register("http server", () => new Promise<void>((resolve) => server.close(() => resolve())));
}
