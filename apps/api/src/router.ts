import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "./context.js";
import { validationError } from "./errors.js";

export const PARTNER_BASE = "/api/partner/v1";
export const ADMIN_BASE = "/api/admin/v1";

/** A router whose zod failures become KS-4101/KS-4102 errors; every route group starts from one. */
export function createRouter() {
  return new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      if (!result.success) {
        throw validationError(result.error, (result as { data?: unknown }).data, result.target);
      }
    },
  });
}
