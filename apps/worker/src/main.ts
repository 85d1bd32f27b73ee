import { parseArgs } from "node:util";
import {
  collectProcessMetrics,
  createLogger,
  listenErrorMessage,
  loadEnvOrExit,
  ShutdownManager,
  startMetricsServer,
} from "@outcomes/runtime";
import { ROLE_NAMES, ROLES, type RoleName } from "./roles.js";
import { startWorker } from "./start-worker.js";

const { values } = parseArgs({ options: { role: { type: "string", multiple: true, default: ["all"] } } });
const requested = values.role.flatMap((role) => role.split(","));
const roles: RoleName[] = requested.includes("all") ? [...ROLE_NAMES] : (requested as RoleName[]);
const unknown = roles.filter((role) => !ROLE_NAMES.includes(role));
if (unknown.length > 0) {
  process.stderr.write(`Unknown role(s): ${unknown.join(", ")}. Roles: ${ROLE_NAMES.join(", ")}, all\n`);
  process.exit(1);
}

const env = loadEnvOrExit();
const logger = createLogger(env.LOG_LEVEL, `worker:${roles.join(",")}`);
const shutdown = new ShutdownManager(logger);
shutdown.installSignalHandlers();

// Registered first so it closes last: Prometheus can scrape the process while it drains.
collectProcessMetrics();
// Several workers on one host (roles scaled as processes) share the configured port: the later
// ones serve their metrics on a free port, announced, rather than stop the work.
const metricsServer = await startMetricsServer(env.WORKER_METRICS_PORT, "0.0.0.0", { anyPortIfTaken: true }).catch(
  (error: NodeJS.ErrnoException) => {
    logger.fatal(
      { port: env.WORKER_METRICS_PORT },
      listenErrorMessage("WORKER_METRICS_PORT", env.WORKER_METRICS_PORT, error),
    );
    process.exit(1);
  },
);
shutdown.register("metrics server", metricsServer.close);
if (env.WORKER_METRICS_PORT !== 0 && metricsServer.port !== env.WORKER_METRICS_PORT) {
  logger.warn(
    { takenPort: env.WORKER_METRICS_PORT, port: metricsServer.port },
    `WORKER_METRICS_PORT ${env.WORKER_METRICS_PORT} is in use by another process: metrics on port ${metricsServer.port} instead`,
  );
}
logger.info({ port: metricsServer.port }, "metrics listening");

const worker = await startWorker(env, logger, Object.fromEntries(roles.map((role) => [role, ROLES[role]])));
shutdown.register("worker", worker.close);
