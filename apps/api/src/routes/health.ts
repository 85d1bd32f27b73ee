import type { OpenAPIHono } from "@hono/zod-openapi";
import { pingDatabase } from "@outcomes/db";
import type { AppEnv } from "../context.js";

export function registerHealthRoutes(app: OpenAPIHono<AppEnv>) {
  /** Liveness: the process answers. */
  app.get("/healthz", (c) => c.json({ status: "ok" }));

  /** Readiness: Postgres and Redis both answer; 503 names the one that does not. */
  app.get("/readyz", async (c) => {
    const { db, redis } = c.var.deps;
    const [postgres, redisCheck] = await Promise.all([
      pingDatabase(db).then(
        () => "ok",
        () => "unavailable",
      ),
      redis.ping().then(
        () => "ok",
        () => "unavailable",
      ),
    ]);
    const ready = postgres === "ok" && redisCheck === "ok";
    return c.json({ status: ready ? "ok" : "unavailable", postgres, redis: redisCheck }, ready ? 200 : 503);
  });
}
