import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { Logger } from "./logger.js";
import { renderMetrics } from "./metrics.js";

export interface MetricsServer {
  port: number;
  close: () => Promise<void>;
}

/** The exposition a scrape answers with (this process's registry unless told otherwise). */
export type MetricsRenderer = () => Promise<{ contentType: string; body: string }>;

/**
 * A bare HTTP server of its own, apart from any API port: `GET /metrics` for Prometheus and
 * `GET /healthz` for container health checks (workers, and the API's `API_METRICS_PORT`). Port 0
 * picks a free port; so does a port another process holds when `anyPortIfTaken` is set (compare
 * the returned `port` with the one asked for).
 */
export async function startMetricsServer(
  port: number,
  host = "0.0.0.0",
  options: { anyPortIfTaken?: boolean; render?: MetricsRenderer } = {},
): Promise<MetricsServer> {
  const render = options.render ?? renderMetrics;
  const server = createServer((request, response) => {
    const path = (request.url ?? "/").split("?")[0];
    if (request.method !== "GET" || (path !== "/metrics" && path !== "/healthz")) {
      response.writeHead(404, { "Content-Type": "text/plain" }).end("not found\n");
      return;
    }
    if (path === "/healthz") {
      response.writeHead(200, { "Content-Type": "application/json" }).end('{"status":"ok"}');
      return;
    }
    render().then(
      ({ contentType, body }) => response.writeHead(200, { "Content-Type": contentType }).end(body),
      () => response.writeHead(500, { "Content-Type": "text/plain" }).end("metrics unavailable\n"),
    );
  });
  const listen = (on: number) =>
    new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(on, host, () => {
        server.off("error", reject);
        resolve();
      });
    });
  await listen(port).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== "EADDRINUSE" || !options.anyPortIfTaken) throw error;
    return listen(0);
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Scrapers keep connections alive; do not let them hold the shutdown.
        server.closeAllConnections();
      }),
  };
}

/**
 * For process entry points: the metrics listener on the port `variable` names. Several processes
 * on one host may be given the same port: the later ones serve on a free port and say so at warn
 * level rather than stop their work. A port that cannot be had at all stops the process (exit 1)
 * with one line naming the variable.
 */
export async function listenForMetricsOrExit(
  variable: string,
  port: number,
  logger: Logger,
  render?: MetricsRenderer,
): Promise<MetricsServer> {
  const server = await startMetricsServer(port, "0.0.0.0", { anyPortIfTaken: true, render }).catch(
    (error: NodeJS.ErrnoException) => {
      logger.fatal({ port }, listenErrorMessage(variable, port, error));
      process.exit(1);
    },
  );
  if (port !== 0 && server.port !== port) {
    logger.warn(
      { takenPort: port, port: server.port },
      `${variable} ${port} is in use by another process: metrics on port ${server.port} instead`,
    );
  }
  logger.info({ port: server.port }, "metrics listening");
  return server;
}

/**
 * One line for a port a process cannot listen on, naming the variable that sets it (instead of an
 * uncaught EADDRINUSE stack).
 */
export function listenErrorMessage(variable: string, port: number, error: NodeJS.ErrnoException): string {
  return error.code === "EADDRINUSE"
    ? `${variable} ${port} is in use by another process: stop it or set ${variable} to a free port`
    : `${variable} ${port}: cannot listen (${error.code ?? error.message})`;
}
