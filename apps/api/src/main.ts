import cluster from "node:cluster";
import { serve } from "@hono/node-server";
import { createLogger, listenErrorMessage, loadEnvOrExit, ShutdownManager } from "@outcomes/runtime";
import { joinPrimary, runPrimary } from "./api-cluster.js";
import { buildApi } from "./build-api.js";
import { answerHttpParserErrors } from "./http-parser-errors.js";

const env = loadEnvOrExit();
if (env.WEB_CONCURRENCY > 1 && cluster.isPrimary) {
  runPrimary(env.WEB_CONCURRENCY, createLogger(env.LOG_LEVEL, "api-primary"));
} else {
  await startApiProcess();
}

async function startApiProcess() {
  const logger = createLogger(env.LOG_LEVEL, "api");
  const shutdown = new ShutdownManager(logger);
  shutdown.installSignalHandlers();
  if (cluster.isWorker) joinPrimary(shutdown);

  const api = await buildApi(env, logger);
  shutdown.register("api", api.close);
  const server = serve({ fetch: api.app.fetch, port: env.PORT }, (info) =>
    logger.info({ port: info.port }, "api listening"),
  );
  // Two APIs on one port is a mistake: one line naming PORT and exit 1, not an uncaught stack.
  server.once("error", (error: NodeJS.ErrnoException) => {
    // An API process of a cluster (WEB_CONCURRENCY) learns of a taken port from the primary's bind.
    if (error.syscall !== "listen" && error.syscall !== "bind") throw error;
    logger.fatal({ port: env.PORT }, listenErrorMessage("PORT", env.PORT, error));
    void shutdown.shutdown().finally(() => process.exit(1));
  });
  answerHttpParserErrors(server, logger);
  shutdown.register("http server", () => new Promise<void>((resolve) => server.close(() => resolve())));
}
