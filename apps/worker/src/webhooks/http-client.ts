import type { LookupAddress } from "node:dns";
import type { LookupFunction } from "node:net";
import { type HostResolver, loopbackPortAllowed, vetAddresses } from "@outcomes/core";
import { systemResolver } from "@outcomes/runtime";
import { Agent } from "undici";

/** A webhook URL refused for where it points (SSRF guard); the message says why. */
export class RefusedAddressError extends Error {
  readonly code = "EWEBHOOKREFUSED";
  constructor(reason: string) {
    super(`Refused: URL ${reason}`);
    this.name = "RefusedAddressError";
  }
}

/**
 * The socket's `lookup`: resolve, vet every address, then hand the socket only vetted ones. The
 * connection goes to the address that was checked, so DNS cannot answer differently in between
 * (no rebinding window).
 */
export function vettedLookup(resolve: HostResolver, allowLoopback: boolean): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname).then(
      (resolved) => {
        const refusal = vetAddresses(resolved, allowLoopback);
        if (refusal) return callback(new RefusedAddressError(refusal), "", 0);
        const wanted = options.family === 4 || options.family === 6 ? options.family : 0;
        const usable = resolved.filter((entry) => wanted === 0 || entry.family === wanted) as LookupAddress[];
        const first = usable[0];
        if (!first) return callback(new RefusedAddressError(`${hostname} has no IPv${wanted} address`), "", 0);
        if (options.all) return callback(null, usable);
        callback(null, first.address, first.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, "", 0),
    );
  };
}

/**
 * A loopback delivery's `lastError` for every failure without an HTTP answer: a closed port, one
 * SANDBOX_LOOPBACK_PORTS does not list, a service that hangs up on HTTP (Postgres, Redis) or never
 * answers would otherwise tell a sandbox partner what listens on the host.
 */
export const LOOPBACK_UNREACHABLE = "Could not connect to the receiver";

export interface WebhookResponse {
  status: number;
}

export interface WebhookHttpClient {
  /** POSTs the body; resolves with the status of any answer, rejects on no answer in time. */
  post(url: URL, allowLoopback: boolean, headers: Record<string, string>, body: string): Promise<WebhookResponse>;
  close(): Promise<void>;
}

/**
 * undici with keep-alive pools per origin. Two agents: the strict one for every webhook, and one
 * whose lookup accepts loopback, used only for the sandbox localhost URLs (whose point is to reach
 * the partner's own machine), on the ports `loopbackPorts` allows. Redirects are not followed: a
 * 3xx is a failed attempt.
 */
export function createWebhookHttpClient(options: {
  timeoutMs: number;
  resolve?: HostResolver;
  /** SANDBOX_LOOPBACK_PORTS: the ports loopback deliveries may use (unset: any). */
  loopbackPorts?: readonly number[];
  /** Keep-alive connections to one receiver at most (the webhooks role: its sends in flight). */
  connectionsPerOrigin?: number;
}): WebhookHttpClient {
  const resolve = options.resolve ?? systemResolver;
  const agent = (allowLoopback: boolean) =>
    new Agent({
      connections: options.connectionsPerOrigin ?? 32,
      keepAliveTimeout: 30_000,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
      connect: { timeout: options.timeoutMs, lookup: vettedLookup(resolve, allowLoopback) },
    });
  const strict = agent(false);
  const loopback = agent(true);
  return {
    async post(url, allowLoopback, headers, body) {
      // Never connected to, and told as a closed port (LOOPBACK_UNREACHABLE).
      if (allowLoopback && !loopbackPortAllowed(url, options.loopbackPorts))
        throw new Error("loopback port not allowed");
      const response = await (allowLoopback ? loopback : strict).request({
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
        method: "POST",
        headers,
        body,
        // One deadline for the whole exchange: connect, headers and body.
        signal: AbortSignal.timeout(options.timeoutMs),
      });
      // Read (at most 64 KiB of) the answer so the connection can be reused; its content is not kept.
      await response.body.dump({ limit: 64 * 1024 }).catch(() => {});
      return { status: response.statusCode };
    },
    async close() {
      await Promise.all([strict.close(), loopback.close()]);
    },
  };
}

/**
 * A short, log-safe description of why an attempt got no answer; for a loopback delivery, one text
 * whatever happened (LOOPBACK_UNREACHABLE) but an SSRF refusal.
 */
export function describeFailure(error: unknown, timeoutMs: number, loopback = false): string {
  if (error instanceof RefusedAddressError) return error.message;
  const err = error as { name?: string; code?: string; message?: string; cause?: unknown };
  if (err?.cause instanceof RefusedAddressError) return err.cause.message;
  if (loopback) return LOOPBACK_UNREACHABLE;
  if (err?.name === "TimeoutError" || err?.name === "AbortError" || /Timeout/.test(err?.code ?? "")) {
    return `No answer within ${timeoutMs} ms`;
  }
  const code = err?.code ? `${err.code}: ` : "";
  return `${code}${err?.message ?? String(error)}`.slice(0, 500);
}
