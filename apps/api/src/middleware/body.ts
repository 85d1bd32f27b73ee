import type { IncomingMessage } from "node:http";
import { ErrorCode, ServiceError } from "@outcomes/core";
import type { Context, MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";

const JSON_TYPE = /^application\/([\w.-]+\+)?json\s*(;|$)/i;
/** Strict UTF-8: a body with bytes that are not UTF-8 is refused rather than silently repaired. */
const utf8 = new TextDecoder("utf-8", { fatal: true });

/** A body over `maxBytes` is refused unread with KS-4101, and the connection closed. */
function tooLarge(c: Context, maxBytes: number): never {
  // Closing the connection lets the client stop sending and read the answer (on a kept-alive
  // socket it can be cut off mid-upload and never see the 400).
  c.header("Connection", "close");
  throw new ServiceError(ErrorCode.InvalidRequest, {
    message: `Request body is too large (limit ${maxBytes / 1024 / 1024} MiB)`,
  });
}

/** The whole body from the Node stream, or null as soon as it grows past `maxBytes`. */
function readIncoming(incoming: IncomingMessage, maxBytes: number): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        incoming.off("data", onData);
        incoming.pause();
        resolve(null);
      } else chunks.push(chunk);
    };
    incoming.on("data", onData);
    incoming.once("end", () => resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size)));
    incoming.once("error", reject);
  });
}

/**
 * The body limit (1 MiB) and body read in one step, straight from Node's `IncomingMessage`: the
 * text lands in Hono's body cache, where `c.req.text()`/`c.req.json()` (the validators, the JSON
 * guard) find it. Hono's own `bodyLimit` reads through `c.req.raw.body`, which makes
 * @hono/node-server build a full WHATWG Request (undici, web streams) for every request: several
 * times the cost of the rest of the read. @hono/node-server 2 reads bodies directly too
 * (`c.req.raw.arrayBuffer()`), but through it a spin cost ~15 µs more CPU than through this reader
 * (docs/performance.md). For other content types, and outside @hono/node-server (no `incoming`),
 * the stock middleware still applies. The text is decoded as strict UTF-8 (invalid bytes: 400
 * KS-4101), a leading BOM dropped.
 */
export function nodeBody(maxBytes: number): MiddlewareHandler {
  const fallback = bodyLimit({ maxSize: maxBytes, onError: (c) => tooLarge(c, maxBytes) });
  return async (c, next) => {
    // A GET or HEAD has no body to limit (its Request is built without one): asking the stock
    // middleware would build that Request only to find so (~55 µs of every read, measured).
    if (c.req.method === "GET" || c.req.method === "HEAD") return next();
    const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
    // Only JSON bodies take the fast path: for any other (or no) Content-Type the route validators
    // inspect the raw Request's body themselves (e.g. to answer 415).
    if (!incoming || !JSON_TYPE.test(c.req.header("Content-Type") ?? "")) return fallback(c, next);
    const declared = c.req.header("Content-Length");
    if (declared !== undefined && Number(declared) > maxBytes) tooLarge(c, maxBytes);
    const bytes = await readIncoming(incoming, maxBytes);
    if (bytes === null) tooLarge(c, maxBytes);
    let text: string;
    try {
      text = utf8.decode(bytes);
    } catch {
      throw new ServiceError(ErrorCode.InvalidRequest, { message: "Request body is not valid UTF-8" });
    }
    // Hono caches each body reading as the promise of it (its typings say the value).
    (c.req.bodyCache as { text?: Promise<string> }).text = Promise.resolve(text);
    await next();
  };
}

/**
 * For a route whose JSON body is optional (createRouter adds it to each): an empty (or blank) body
 * sent with a JSON Content-Type is no body, which the route's validator takes as `{}`, rather than malformed
 * JSON. A route's own middleware runs before its validators, which read the body from Hono's cache.
 */
export const emptyBodyIsAbsent: MiddlewareHandler = async (c, next) => {
  if (JSON_TYPE.test(c.req.header("Content-Type") ?? "") && (await c.req.text()).trim() === "") {
    (c.req.bodyCache as { text?: Promise<string> }).text = Promise.resolve("{}");
  }
  await next();
};
