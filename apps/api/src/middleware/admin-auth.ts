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

/** `<scheme> <credentials>`: the credentials are the whole rest of the header, spaces and all. */
const AUTHORIZATION = /^(\S+) +(.*)$/;
/** Basic credentials that are not base64 of `user:password`: a wrong token, whatever they contain. */
const MALFORMED = Symbol("malformed credentials");
/** Standard base64 (RFC 4648), padded: Node's decoder would skip anything else and decode the rest. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * The operator token from `Authorization: Bearer <token>` or, for browsers on the dashboard,
 * basic auth with the token as the password. The whole header counts: `Bearer <token> junk`
 * presents `<token> junk`, which is not the token.
 */
function presentedAdminToken(authorization: string | undefined): string | undefined | typeof MALFORMED {
  const [, scheme = "", value = ""] = AUTHORIZATION.exec(authorization ?? "") ?? [];
  if (scheme.toLowerCase() === "bearer") return value;
  if (scheme.toLowerCase() === "basic") {
    const decoded = BASE64.test(value) ? Buffer.from(value, "base64").toString("utf8") : "";
    const colon = decoded.indexOf(":");
    return colon < 0 ? MALFORMED : decoded.slice(colon + 1);
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
    if (presented === MALFORMED || !safeEqual(presented, expected))
      throw new ServiceError(ErrorCode.InvalidApiKey, { message: "Invalid operator token" });
    await next();
  };
}
