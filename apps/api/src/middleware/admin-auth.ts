import { timingSafeEqual } from "node:crypto";
import { ErrorCode, ServiceError } from "@outcomes/core";
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../context.js";

/** Compares secrets in constant time (lengths may leak; contents do not). */
export function safeEqual(presented: string, expected: string): boolean {
  const a = Buffer.from(presented);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * The operator token from `Authorization: Bearer <token>` or, for browsers on the dashboard,
 * basic auth with the token as the password.
 */
function presentedAdminToken(authorization: string | undefined): string | undefined {
  if (!authorization) return undefined;
  const [scheme, value = ""] = authorization.split(" ", 2);
  if (scheme?.toLowerCase() === "bearer") return value;
  if (scheme?.toLowerCase() === "basic") {
    const decoded = Buffer.from(value, "base64").toString("utf8");
    return decoded.slice(decoded.indexOf(":") + 1);
  }
  return undefined;
}

/** Unset ADMIN_TOKEN: 503 KS-5002; no token: 401 KS-4001; wrong token: 401 KS-4002. */
export function adminAuth(options: { basicChallenge?: boolean } = {}): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const expected = c.var.deps.env.ADMIN_TOKEN;
    if (!expected)
      throw new ServiceError(ErrorCode.Maintenance, { message: "Operator API is disabled: ADMIN_TOKEN is not set" });
    const presented = presentedAdminToken(c.req.header("Authorization"));
    if (options.basicChallenge && presented === undefined) {
      c.header("WWW-Authenticate", 'Basic realm="operators"');
    }
    if (presented === undefined || presented === "") {
      throw new ServiceError(ErrorCode.MissingApiKey, { message: "Missing operator token (Authorization: Bearer)" });
    }
    if (!safeEqual(presented, expected))
      throw new ServiceError(ErrorCode.InvalidApiKey, { message: "Invalid operator token" });
    await next();
  };
}
