import { partitionHorizons, readyBlocksOfEveryGame } from "@outcomes/db";
import { collectProcessMetrics, metrics, observePartitions, observeQueues, observeReserve } from "@outcomes/runtime";
import type { Context, MiddlewareHandler } from "hono";
import { matchedRoutes } from "hono/route";
import type { AppDeps, AppEnv } from "./context.js";

/**
 * The route pattern a request matched (`/api/partner/v1/games/:gameId`), never the raw path, so
 * label cardinality stays bounded; requests that matched no endpoint are `unmatched`.
 */
function routePattern(c: Context): string {
  const endpoint = matchedRoutes(c).findLast((route) => route.method !== "ALL");
  return endpoint?.path ?? "unmatched";
}

/** Observes every request's duration by method, route pattern and status. */
export function httpMetrics(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const stop = metrics.httpRequestDuration.startTimer();
    try {
      await next();
    } finally {
      stop({ method: c.req.method, route: routePattern(c), status: String(c.res.status) });
    }
  };
}

/** Reads each game's ready blocks from Postgres and its queued outcomes from its Redis list. */
function readReserve(deps: AppDeps) {
  return async () => {
    const rows = await readyBlocksOfEveryGame(deps.db);
    // One LLEN each, not a pipeline: on a cluster the lists are spread over the shards (the client's
    // auto-pipelining still batches them per shard).
    const lengths = await Promise.all(rows.map((row) => deps.redis.llen(deps.keys.outcomeQueue(row))));
    return rows.map((row, index) => ({
      gameId: row.id,
      readyBlocks: row.readyBlocks,
      remainingOutcomes: lengths[index] ?? 0,
    }));
  };
}

function readQueues(deps: AppDeps) {
  return () =>
    Promise.all(
      Object.entries(deps.producers.queues).map(async ([queue, handle]) => ({
        queue,
        counts: await handle.getJobCounts(),
      })),
    );
}

/**
 * The process metrics and the scrape-time gauges of shared state (reserve per game, queue depths,
 * partitions ahead), which the API serves since it holds every connection they need. They are
 * scraped on `API_METRICS_PORT` (main.ts), never on the partner port: game ids are sequential, so
 * the reserve gauges would show any tenant's spin volume to anyone.
 */
export function observeApiState(deps: AppDeps) {
  collectProcessMetrics();
  observeReserve(readReserve(deps));
  observeQueues(readQueues(deps));
  observePartitions(() => partitionHorizons(deps.db));
}
