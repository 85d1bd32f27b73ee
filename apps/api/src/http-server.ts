import type { AddressInfo } from "node:net";
import { type ServerType, serve } from "@hono/node-server";
import type { Env, Logger } from "@outcomes/runtime";
import { answerHttpParserErrors } from "./http-parser-errors.js";

/**
 * Node looks for connections past their header or request timeout only this often; its default
 * (30 s) would let a 10 s header timeout run to 40 s.
 */
function checkingIntervalMs(env: Env): number {
  return Math.max(10, Math.min(1_000, Math.floor(env.HTTP_HEADERS_TIMEOUT_MS / 2)));
}

/**
 * The API's HTTP server (main.ts, each process of a cluster, and the test harness): a client gets
 * HTTP_HEADERS_TIMEOUT_MS for its headers and HTTP_REQUEST_TIMEOUT_MS for the whole request, then
 * its connection is closed; past HTTP_MAX_CONNECTIONS open connections, new ones are closed as they
 * arrive. Requests the HTTP parser refuses are answered as every other error.
 */
export function serveApi(
  app: { fetch: Parameters<typeof serve>[0]["fetch"] },
  env: Env,
  logger: Logger,
  listen: { port: number; hostname?: string },
  onListening?: (info: AddressInfo) => void,
): ServerType {
  const server = serve(
    {
      fetch: app.fetch,
      port: listen.port,
      hostname: listen.hostname,
      serverOptions: {
        headersTimeout: env.HTTP_HEADERS_TIMEOUT_MS,
        requestTimeout: env.HTTP_REQUEST_TIMEOUT_MS,
        connectionsCheckingInterval: checkingIntervalMs(env),
      },
    },
    onListening,
  );
  server.maxConnections = env.HTTP_MAX_CONNECTIONS;
  answerHttpParserErrors(server, logger);
  return server;
}
