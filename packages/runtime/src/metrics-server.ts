import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { renderMetrics } from "./metrics.js";

export interface MetricsServer {
  port: number;
  close: () => Promise<void>;
}

/**
 * A bare HTTP server for processes without an API (workers): `GET /metrics` for Prometheus and
 * `GET /healthz` for container health checks. Port 0 picks a free port; so does a port another
 * process holds when `anyPortIfTaken` is set (compare the returned `port` with the one asked for).
 */
export async function startMetricsServer(
  port: number,
  host = "0.0.0.0",
  options: { anyPortIfTaken?: boolean } = {},
): Promise<MetricsServer> {
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
    renderMetrics().then(
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
 * One line for a port a process cannot listen on, naming the variable that sets it (instead of an
 * uncaught EADDRINUSE stack).
 */
export function listenErrorMessage(variable: string, port: number, error: NodeJS.ErrnoException): string {
  return error.code === "EADDRINUSE"
    ? `${variable} ${port} is in use by another process: stop it or set ${variable} to a free port`
    : `${variable} ${port}: cannot listen (${error.code ?? error.message})`;
}
