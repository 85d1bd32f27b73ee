import { ErrorCode, ServiceError } from "@outcomes/core";
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../context.js";

/**
 * The gate of a route that arrived in `release`, ahead of its body's validation. Until that
 * release's rollout has finished a process of the release before may answer any request, and it
 * has no such route (404 KS-4215), so every process answers as it does (docs/upgrades.md).
 */
export function releasedIn(release: number): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (!(await c.var.deps.rollout.finished(release))) throw new ServiceError(ErrorCode.NotFound);
    await next();
  };
}
