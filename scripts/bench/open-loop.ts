import { Agent, request } from "node:http";
import { createHistogram } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";

/**
 * Idle keep-alive sockets are dropped before the server's 5 s keep-alive timeout: a request sent
 * on a socket the server is closing at that moment fails with ECONNRESET, an artefact of the client.
 */
const IDLE_SOCKET_MS = 4_000;

export interface FixedRateOptions {
  url: string;
  method: "GET" | "POST";
  headers: Record<string, string>;
  /** Request body; `{n}` is replaced by the request's number modulo `distinct`. */
  body?: string;
  distinct?: number;
  ratePerSecond: number;
  durationMs: number;
  /** Keep-alive sockets at most; a request finding all busy waits (and that wait is counted). */
  maxConnections: number;
}

export interface FixedRateResult {
  targetPerSecond: number;
  sent: number;
  completed: number;
  perSecond: number;
  statuses: Record<string, number>;
  p50Ms: number;
  p99Ms: number;
  p999Ms: number;
  maxMs: number;
}

/**
 * An open-loop load: requests are scheduled at a fixed rate whatever the server does, and each
 * latency is measured from the request's scheduled send time, not from when it was actually sent,
 * so a stalled server shows up in the percentiles (no coordinated omission, as in wrk2).
 */
export async function runFixedRate(options: FixedRateOptions): Promise<FixedRateResult> {
  const agent = new Agent({ keepAlive: true, timeout: IDLE_SOCKET_MS, maxSockets: options.maxConnections });
  const latency = createHistogram();
  const statuses: Record<string, number> = {};
  const count = (key: string) => {
    statuses[key] = (statuses[key] ?? 0) + 1;
  };
  const inFlight = new Set<Promise<void>>();
  let sent = 0;

  const send = (scheduledAt: number) => {
    const body = options.body?.replace("{n}", String(sent % (options.distinct ?? 1)));
    sent++;
    const headers = body ? { ...options.headers, "content-length": String(Buffer.byteLength(body)) } : options.headers;
    const done = new Promise<void>((resolve) => {
      const finish = (key: string) => {
        latency.record(Math.max(1, Math.round((performance.now() - scheduledAt) * 1000)));
        count(key);
        resolve();
      };
      const req = request(options.url, { agent, method: options.method, headers }, (res) => {
        res.resume();
        res.on("end", () => finish(String(res.statusCode)));
      });
      req.on("error", (error: NodeJS.ErrnoException) => finish(`error:${error.code ?? error.message}`));
      req.end(body);
    });
    inFlight.add(done);
    void done.then(() => inFlight.delete(done));
  };

  const interval = 1000 / options.ratePerSecond;
  const started = performance.now();
  const deadline = started + options.durationMs;
  let nextAt = started;
  while (nextAt < deadline) {
    const now = performance.now();
    while (nextAt <= now && nextAt < deadline) {
      send(nextAt);
      nextAt += interval;
    }
    await sleep(1);
  }
  await Promise.all(inFlight);
  const elapsedMs = performance.now() - started;
  agent.destroy();
  const completed = Object.values(statuses).reduce((sum, n) => sum + n, 0);
  return {
    targetPerSecond: options.ratePerSecond,
    sent,
    completed,
    perSecond: completed / (elapsedMs / 1000),
    statuses,
    p50Ms: latency.percentile(50) / 1000,
    p99Ms: latency.percentile(99) / 1000,
    p999Ms: latency.percentile(99.9) / 1000,
    maxMs: latency.max / 1000,
  };
}
