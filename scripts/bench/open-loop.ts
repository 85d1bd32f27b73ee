import { setTimeout as sleep } from "node:timers/promises";
import { createLoadClient, type LatencySummary, type RequestSpec } from "./http-client.js";

export interface FixedRateOptions extends RequestSpec {
  ratePerSecond: number;
  durationMs: number;
  /** Keep-alive sockets at most; a request finding all busy waits (and that wait is counted). */
  maxConnections: number;
}

export interface FixedRateResult extends LatencySummary {
  targetPerSecond: number;
  sent: number;
  perSecond: number;
}

/**
 * An open-loop load: requests are scheduled at a fixed rate whatever the server does, and each
 * latency is measured from the request's scheduled send time, not from when it was actually sent,
 * so a stalled server shows up in the percentiles (no coordinated omission, as in wrk2).
 */
export async function runFixedRate(options: FixedRateOptions): Promise<FixedRateResult> {
  const client = createLoadClient(options, options.maxConnections);
  const inFlight = new Set<Promise<void>>();
  const interval = 1000 / options.ratePerSecond;
  const started = performance.now();
  const deadline = started + options.durationMs;
  let nextAt = started;
  while (nextAt < deadline) {
    const now = performance.now();
    while (nextAt <= now && nextAt < deadline) {
      const done = client.send(nextAt);
      inFlight.add(done);
      void done.then(() => inFlight.delete(done));
      nextAt += interval;
    }
    await sleep(1);
  }
  await Promise.all(inFlight);
  const elapsedMs = performance.now() - started;
  client.close();
  const summary = client.summary();
  return {
    ...summary,
    targetPerSecond: options.ratePerSecond,
    sent: client.sent(),
    perSecond: summary.completed / (elapsedMs / 1000),
  };
}
