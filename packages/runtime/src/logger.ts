import { type DestinationStream, type Logger, pino } from "pino";

/** Paths that may carry secrets; pino replaces them before anything is written. */
const REDACT_PATHS = [
  "key",
  "apiKey",
  "secret",
  "token",
  "password",
  "authorization",
  "*.key",
  "*.apiKey",
  "*.secret",
  "*.token",
  "*.authorization",
  "headers.authorization",
  'headers["x-api-key"]',
  "req.headers.authorization",
  'req.headers["x-api-key"]',
];

/** `destination` defaults to stdout; tests pass a stream to read what would have been logged. */
export function createLogger(level: string, name: string, destination?: DestinationStream): Logger {
  return pino({ level, name, redact: { paths: REDACT_PATHS, censor: "[redacted]" } }, destination);
}

export type { Logger };
