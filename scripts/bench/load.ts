import { createLoadClient, type LatencySummary, type RequestSpec } from "./http-client.js";

export interface LoadOptions extends RequestSpec {
  connections: number;
  durationMs: number;
}

export interface LoadResult extends LatencySummary {
  elapsedMs: number;
  perSecond: number;
}

/**
 * A closed-loop load, like autocannon's: `connections` keep-alive connections, each sending its
 * next request as soon as the previous answer has been read, until the duration is over. The
 * server runs in another process, so this loop has its event loop to itself.
 */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const client = createLoadClient(options, options.connections);
  const started = performance.now();
  const deadline = started + options.durationMs;
  await Promise.all(
    Array.from({ length: options.connections }, async () => {
      while (performance.now() < deadline) await client.send(performance.now());
    }),
  );
  const elapsedMs = performance.now() - started;
  client.close();
  const summary = client.summary();
  return { ...summary, elapsedMs, perSecond: summary.completed / (elapsedMs / 1000) };
}

/** Responses that were not 2xx, plus transport errors. */
export function failures(result: Pick<LoadResult, "statuses">): number {
  return Object.entries(result.statuses)
    .filter(([status]) => !/^2\d\d$/.test(status))
    .reduce((sum, [, n]) => sum + n, 0);
}
