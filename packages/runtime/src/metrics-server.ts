import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { renderMetrics } from "./metrics.js";

export interface MetricsServer {
  port: number;
  close: () => Promise<void>;
}

/**
 * A bare HTTP server for processes without an API (workers): `GET /metrics` for Prometheus and
 * `GET /healthz` for container health checks. Port 0 picks a free port.
 */
export async function startMetricsServer(port: number, host = "0.0.0.0"): Promise<MetricsServer> {
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
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
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
