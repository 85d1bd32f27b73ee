import type { IncomingMessage } from "node:http";
import { ErrorCode, type ErrorDetail, redactApiKeys, redactReplayTokens, ServiceError } from "@outcomes/core";
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ZodError } from "zod";
import type { AppEnv } from "./context.js";
import { errorStatus } from "./error-status.js";

/** Renders any error as `{message, errorCode, requestId, details?}` with the code's status. */
export function renderError(error: unknown, c: Context<AppEnv>): Response {
  const serviceError = toServiceError(error);
  const status = errorStatus(serviceError.code);
  if (
    status >= 500 &&
    serviceError.code !== ErrorCode.Maintenance &&
    serviceError.code !== ErrorCode.OutcomeQueueEmpty
  ) {
    // Every server-side failure is logged with its cause (the body shows only the code).
    c.get("deps")?.logger.error(
      {
        err: serviceError.cause ?? error,
        errorCode: serviceError.code,
        requestId: c.get("requestId"),
        path: redactReplayTokens(redactApiKeys(c.req.path)),
      },
      "request failed",
    );
  }
  // Refused before its body arrived (from the headers alone): closing the connection lets the client
  // stop sending and read the answer, instead of being cut off mid-upload.
  if ((c.env as { incoming?: IncomingMessage } | undefined)?.incoming?.complete === false) {
    c.header("Connection", "close");
  }
  if (serviceError.retryAfterSeconds !== undefined) {
    c.header("Retry-After", String(serviceError.retryAfterSeconds));
  }
  return c.json(
    {
      message: serviceError.message,
      errorCode: serviceError.code,
      requestId: c.get("requestId"),
      ...(serviceError.details ? { details: serviceError.details } : {}),
    },
    status,
  );
}

function toServiceError(error: unknown): ServiceError {
  if (error instanceof ServiceError) return error;
  // Hono's own 4xx (malformed JSON, unsupported Content-Type …) are request validation failures.
  if (error instanceof HTTPException && error.status >= 400 && error.status < 500) {
    return new ServiceError(ErrorCode.InvalidRequest, { message: error.message || "Malformed request" });
  }
  return new ServiceError(ErrorCode.Internal);
}

/**
 * Zod failures of a request: a body field that is absent, `null` or an empty string is KS-4102
 * (CONTRACT: request bodies); anything else (wrong type or format) is KS-4101. Query strings and
 * headers are always KS-4101: an empty `Idempotency-Key:` is a malformed key, not a missing field.
 */
export function validationError(error: ZodError, input: unknown, target: string): ServiceError {
  const details: ErrorDetail[] = error.issues.map((issue) => ({
    path: formatPath(issue.path),
    message: issue.message,
  }));
  const missing =
    target !== "query" &&
    target !== "header" &&
    error.issues.some((issue) => {
      const value = valueAt(input, issue.path);
      return value === undefined || value === null || value === "";
    });
  return missing
    ? new ServiceError(ErrorCode.RequiredFieldMissing, { details })
    : new ServiceError(ErrorCode.InvalidRequest, { details });
}

export function formatPath(path: ReadonlyArray<PropertyKey>): string {
  return path.reduce<string>((out, part) => {
    if (typeof part === "number") return `${out}[${part}]`;
    return out ? `${out}.${String(part)}` : String(part);
  }, "");
}

function valueAt(input: unknown, path: ReadonlyArray<PropertyKey>): unknown {
  let current: unknown = input;
  for (const part of path) {
    if (current === null || typeof current !== "object") return undefined;
    current = (current as Record<PropertyKey, unknown>)[part];
  }
  return current;
}
