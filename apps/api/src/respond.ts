import { randomUUID } from "node:crypto";
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "./context.js";

/** An id a client sent that is safe to echo; anything else is replaced by one of ours. */
const CLIENT_REQUEST_ID = /^[\w\-=]{1,255}$/;

/**
 * Every response's headers gathered as plain data and written once, with the body, as the response
 * is made: `c.header()` adds to the request's record, and `c.json()` / `c.body()` make a response
 * with those headers and a string or byte body. @hono/node-server writes such a response straight
 * to the socket (`writeHead` + `end`, one write). Hono's own `c.header()` keeps a WHATWG `Headers`,
 * and a header set after the response was made (the spin's rate-limit fields, the request id) made
 * node-server rebuild the response as an undici `Response` with a web-stream body: about a fifth of
 * a spin's CPU (docs/performance.md). Responses made otherwise (`c.html`, Bull Board's static files)
 * get the record added once they are made. Also sets the request id (`X-Request-Id`: the client's
 * when it is a safe token, else a new UUID).
 */
export function gatheredHeaders(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const sentId = c.req.header("X-Request-Id");
    const requestId = sentId !== undefined && CLIENT_REQUEST_ID.test(sentId) ? sentId : randomUUID();
    c.set("requestId", requestId);
    const headers: Record<string, string> = { "X-Request-Id": requestId };
    let made: Response | undefined;
    c.header = ((name: string, value?: string) => {
      if (value === undefined) delete headers[name];
      else headers[name] = value;
    }) as typeof c.header;
    const body = (data: string | Uint8Array | null, arg?: number | ResponseInit, extra?: Record<string, string>) => {
      const status = typeof arg === "number" ? arg : (arg?.status ?? 200);
      made = new Response(data, { status, headers: extra ? { ...headers, ...extra } : headers });
      return made;
    };
    c.body = body as typeof c.body;
    c.json = ((object: unknown, arg?: number | ResponseInit, extra?: Record<string, string>) =>
      body(JSON.stringify(object), arg, { "Content-Type": "application/json", ...extra })) as typeof c.json;
    await next();
    if (c.res !== made) for (const [name, value] of Object.entries(headers)) c.res.headers.set(name, value);
  };
}
