import type { OpenAPIHono } from "@hono/zod-openapi";
import { blocks, games, partitionHorizons } from "@outcomes/db";
import {
  collectProcessMetrics,
  metrics,
  observePartitions,
  observeQueues,
  observeReserve,
  renderMetrics,
} from "@outcomes/runtime";
import { eq, sql } from "drizzle-orm";
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
    const rows = await deps.db
      .select({
        gameId: games.id,
        readyBlocks: sql<number>`(count(${blocks.id}) filter (where ${blocks.status} = 'ready'))::int`,
      })
      .from(games)
      .leftJoin(blocks, eq(blocks.gameId, games.id))
      .groupBy(games.id);
    if (rows.length === 0) return [];
    const pipeline = deps.redis.pipeline();
    for (const row of rows) pipeline.llen(deps.keys.outcomeQueue(row.gameId));
    const lengths = (await pipeline.exec()) ?? [];
    return rows.map((row, index) => {
      const [error, length] = lengths[index] ?? [];
      if (error) throw error;
      return { gameId: row.gameId, readyBlocks: row.readyBlocks, remainingOutcomes: Number(length ?? 0) };
    });
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
 * `GET /metrics` (no auth: keep it inside the network). The API also serves the scrape-time gauges
 * of shared state (reserve per game, queue depths, partitions ahead), since it holds every
 * connection they need.
 */
export function registerMetricsRoute(app: OpenAPIHono<AppEnv>, deps: AppDeps) {
  collectProcessMetrics();
  observeReserve(readReserve(deps));
  observeQueues(readQueues(deps));
  observePartitions(() => partitionHorizons(deps.db));
  app.get("/metrics", async (c) => {
    const { contentType, body } = await renderMetrics();
    return c.body(body, 200, { "Content-Type": contentType });
  });
}
