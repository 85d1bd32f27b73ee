import { Agent, request } from "node:http";
import { createHistogram } from "node:perf_hooks";

/**
 * Idle keep-alive sockets are dropped before the server's 5 s keep-alive timeout: a request sent
 * on a socket the server is closing at that moment fails with ECONNRESET, an artefact of the client.
 */
const IDLE_SOCKET_MS = 4_000;

/** What every request of a load sends. */
export interface RequestSpec {
  url: string;
  method: "GET" | "POST";
  headers: Record<string, string>;
  /** Request body; `{n}` is replaced by the request's number modulo `distinct` (e.g. a player id). */
  body?: string;
  distinct?: number;
}

export interface LatencySummary {
  completed: number;
  /** Responses by HTTP status, and transport failures as `error:<code>`. */
  statuses: Record<string, number>;
  p50Ms: number;
  p99Ms: number;
  p999Ms: number;
  maxMs: number;
}

/**
 * Keep-alive requests over at most `maxSockets` connections, each latency recorded from the time
 * the caller says it started (the send time for a closed loop, the scheduled time for an open one).
 */
export function createLoadClient(spec: RequestSpec, maxSockets: number) {
  const agent = new Agent({ keepAlive: true, timeout: IDLE_SOCKET_MS, maxSockets });
  const latency = createHistogram();
  const statuses: Record<string, number> = {};
  let sent = 0;

  const send = (startedAt: number) =>
    new Promise<void>((resolve) => {
      const body = spec.body?.replace("{n}", String(sent % (spec.distinct ?? 1)));
      sent++;
      const headers = body ? { ...spec.headers, "content-length": String(Buffer.byteLength(body)) } : spec.headers;
      const finish = (key: string) => {
        // Microseconds: the histogram records integers ≥ 1.
        latency.record(Math.max(1, Math.round((performance.now() - startedAt) * 1000)));
        statuses[key] = (statuses[key] ?? 0) + 1;
        resolve();
      };
      const req = request(spec.url, { agent, method: spec.method, headers }, (res) => {
        res.resume();
        res.on("end", () => finish(String(res.statusCode)));
      });
      req.on("error", (error: NodeJS.ErrnoException) => finish(`error:${error.code ?? error.message}`));
      req.end(body);
    });

  const summary = (): LatencySummary => ({
    completed: Object.values(statuses).reduce((sum, n) => sum + n, 0),
    statuses,
    p50Ms: latency.percentile(50) / 1000,
    p99Ms: latency.percentile(99) / 1000,
    p999Ms: latency.percentile(99.9) / 1000,
    maxMs: latency.max / 1000,
  });

  return { send, summary, sent: () => sent, close: () => agent.destroy() };
}
