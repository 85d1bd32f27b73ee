import { serve } from "@hono/node-server";
import { createLogger, listenErrorMessage, loadEnvOrExit, ShutdownManager } from "@outcomes/runtime";
import { buildApi } from "./build-api.js";
import { answerHttpParserErrors } from "./http-parser-errors.js";

const env = loadEnvOrExit();
const logger = createLogger(env.LOG_LEVEL, "api");
const shutdown = new ShutdownManager(logger);
shutdown.installSignalHandlers();

const api = await buildApi(env, logger);
shutdown.register("api", api.close);
const server = serve({ fetch: api.app.fetch, port: env.PORT }, (info) =>
  logger.info({ port: info.port }, "api listening"),
);
// Two APIs on one port is a mistake: one line naming PORT and exit 1, not an uncaught stack.
server.once("error", (error: NodeJS.ErrnoException) => {
  if (error.syscall !== "listen") throw error;
  logger.fatal({ port: env.PORT }, listenErrorMessage("PORT", env.PORT, error));
  void shutdown.shutdown().finally(() => process.exit(1));
});
answerHttpParserErrors(server, logger);
shutdown.register("http server", () => new Promise<void>((resolve) => server.close(() => resolve())));
