import { parseArgs } from "node:util";
import {
  collectProcessMetrics,
  createLogger,
  listenForMetricsOrExit,
  loadEnvOrExit,
  ShutdownManager,
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
const metricsServer = await listenForMetricsOrExit("WORKER_METRICS_PORT", env.WORKER_METRICS_PORT, logger);
shutdown.register("metrics server", metricsServer.close);

const worker = await startWorker(env, logger, Object.fromEntries(roles.map((role) => [role, ROLES[role]])));
shutdown.register("worker", worker.close);
