import { ServiceError } from "@outcomes/core";
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
  throw new ServiceError("KS-4101", { message: `Request body is too large (limit ${maxBytes / 1024 / 1024} MiB)` });
}

/**
 * The body limit (1 MiB) and, for JSON, the body read as strict UTF-8 (invalid bytes: 400 KS-4101;
 * a leading BOM dropped) into Hono's body cache, where `c.req.text()`/`c.req.json()` (the
 * validators, the JSON guard) find it.
 *
 * A body with `Content-Length` is checked on the header (Node's parser never reads past it) and
 * read by @hono/node-server straight from the socket. Hono's own `bodyLimit` looks at
 * `c.req.raw.body`, which makes the server build a full WHATWG Request (undici, web streams) for
 * every request, several times the cost of the rest of the read: it is left for bodies without a
 * length (chunked), which it counts while reading.
 */
export function jsonBody(maxBytes: number): MiddlewareHandler {
  const streamed = bodyLimit({ maxSize: maxBytes, onError: (c) => tooLarge(c, maxBytes) });
  const readStrictly = async (c: Context, next: () => Promise<void>) => {
    let text: string;
    try {
      text = utf8.decode(await c.req.raw.arrayBuffer());
    } catch (error) {
      if (error instanceof ServiceError) throw error;
      throw new ServiceError("KS-4101", { message: "Request body is not valid UTF-8" });
    }
    // Hono caches each body reading as the promise of it (its typings say the value).
    (c.req.bodyCache as { text?: Promise<string> }).text = Promise.resolve(text);
    await next();
  };
  return async (c, next) => {
    const declared = c.req.header("Content-Length");
    if (declared !== undefined) {
      if (Number(declared) > maxBytes) tooLarge(c, maxBytes);
      // Only JSON bodies are read here: for any other (or no) Content-Type the route validators
      // inspect the raw Request's body themselves (e.g. to answer 415).
      return JSON_TYPE.test(c.req.header("Content-Type") ?? "") ? readStrictly(c, next) : next();
    }
    if (!JSON_TYPE.test(c.req.header("Content-Type") ?? "")) return streamed(c, next);
    return streamed(c, () => readStrictly(c, next));
  };
}
