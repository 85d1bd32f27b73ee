import { ErrorCode, type GateName, ServiceError } from "@outcomes/core";
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../context.js";

/**
 * The release gate of a route the previous release does not have (`RELEASE_GATES`), ahead of its
 * body's validation. Until the gate opens a process of the previous release may answer any
 * request, and it answers 404 KS-4215, so every process answers so (docs/upgrades.md).
 */
export function gated(gate: GateName, message?: string): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (!(await c.var.deps.rollout.on(gate))) throw new ServiceError(ErrorCode.NotFound, { message });
    await next();
  };
}
