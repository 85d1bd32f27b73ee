import { randomUUID } from "node:crypto";
import type { Server } from "node:http";
import type { ServerType } from "@hono/node-server";
import { ErrorCode } from "@outcomes/core";
import type { Logger } from "@outcomes/runtime";

/**
 * Requests Node's HTTP parser refuses before the app sees them (a request line and headers over
 * its 16 KiB limit, bytes that are not HTTP) are answered like every other error: 400 KS-4101 with
 * a JSON body and a request id, instead of Node's bare 431 or 400.
 */
export function answerHttpParserErrors(server: ServerType, logger: Logger) {
  // serve() without `createServer` options runs node:http (HTTP/1.1).
  (server as Server).on("clientError", (error: NodeJS.ErrnoException, socket) => {
    // Nothing to answer on a connection the client already dropped, or a timed-out idle one.
    if (!socket.writable || !error.code?.startsWith("HPE_")) {
      socket.destroy();
      return;
    }
    const requestId = randomUUID();
    const message =
      error.code === "HPE_HEADER_OVERFLOW" ? "Request headers are too large (limit 16 KiB)" : "Malformed HTTP request";
    logger.info(
      { requestId, status: 400, errorCode: ErrorCode.InvalidRequest, reason: error.code },
      "request refused by the HTTP parser",
    );
    const body = JSON.stringify({ message, errorCode: ErrorCode.InvalidRequest, requestId });
    socket.end(
      `HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}
