import { Agent, request } from "node:http";
import { createHistogram } from "node:perf_hooks";

/**
 * Idle keep-alive sockets are dropped before the server's 5 s keep-alive timeout: a request sent
 * on a socket the server is closing at that moment fails with ECONNRESET, an artefact of the client.
 */
const IDLE_SOCKET_MS = 4_000;

export interface LoadOptions {
  url: string;
  method: "GET" | "POST";
  headers: Record<string, string>;
  /** Request body; `{n}` is replaced by the request's number modulo `distinct` (e.g. a player id). */
  body?: string;
  distinct?: number;
  connections: number;
  durationMs: number;
}

export interface LoadResult {
  completed: number;
  elapsedMs: number;
  perSecond: number;
  /** Responses by HTTP status, and transport failures as `error:<code>`. */
  statuses: Record<string, number>;
  p50Ms: number;
  p99Ms: number;
  p999Ms: number;
  maxMs: number;
}

/**
 * A closed-loop load, like autocannon's: `connections` keep-alive connections, each sending its
 * next request as soon as the previous answer has been read, until the duration is over. The
 * server runs in another process, so this loop has its event loop to itself.
 */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const agent = new Agent({ keepAlive: true, timeout: IDLE_SOCKET_MS, maxSockets: options.connections });
  const latency = createHistogram();
  const statuses: Record<string, number> = {};
  const count = (key: string) => {
    statuses[key] = (statuses[key] ?? 0) + 1;
  };
  let sent = 0;

  const once = () =>
    new Promise<void>((resolve) => {
      const body = options.body?.replace("{n}", String(sent % (options.distinct ?? 1)));
      sent++;
      const started = process.hrtime.bigint();
      const headers = body
        ? { ...options.headers, "content-length": String(Buffer.byteLength(body)) }
        : options.headers;
      const req = request(options.url, { agent, method: options.method, headers }, (res) => {
        res.resume();
        res.on("end", () => {
          // Microseconds: the histogram records integers ≥ 1.
          latency.record(Math.max(1, Number((process.hrtime.bigint() - started) / 1000n)));
          count(String(res.statusCode));
          resolve();
        });
      });
      req.on("error", (error: NodeJS.ErrnoException) => {
        count(`error:${error.code ?? error.message}`);
        resolve();
      });
      req.end(body);
    });

  const started = performance.now();
  const deadline = started + options.durationMs;
  await Promise.all(
    Array.from({ length: options.connections }, async () => {
      while (performance.now() < deadline) await once();
    }),
  );
  const elapsedMs = performance.now() - started;
  agent.destroy();
  const completed = Object.values(statuses).reduce((sum, n) => sum + n, 0);
  return {
    completed,
    elapsedMs,
    perSecond: completed / (elapsedMs / 1000),
    statuses,
    p50Ms: latency.percentile(50) / 1000,
    p99Ms: latency.percentile(99) / 1000,
    p999Ms: latency.percentile(99.9) / 1000,
    maxMs: latency.max / 1000,
  };
}

/** Responses that were not 2xx, plus transport errors. */
export function failures(result: Pick<LoadResult, "statuses">): number {
  return Object.entries(result.statuses)
    .filter(([status]) => !/^2\d\d$/.test(status))
    .reduce((sum, [, n]) => sum + n, 0);
}
