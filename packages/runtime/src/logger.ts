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

/** drizzle's query errors put the bound parameters (e.g. an API key's hash) into their text. */
const PARAMS_IN_TEXT = /\nparams: [^\n]*/g;

/**
 * pino's error serializer without query parameters: a failed query's `params` field and the
 * `params: …` line drizzle writes into message and stack are dropped (found when Postgres went away
 * under load: every auth failure logged the presented key's hash), and so are the arguments ioredis
 * attaches to a failed command's error (`command.args`: an API key's hash, for the issued-key set).
 */
function serializeError(error: Error): Record<string, unknown> {
  const { params: _params, ...serialized } = pino.stdSerializers.err(error) as unknown as Record<string, unknown>;
  const command = serialized.command as { name?: unknown } | undefined;
  if (command && typeof command === "object") serialized.command = { name: command.name };
  for (const field of ["message", "stack"]) {
    const text = serialized[field];
    if (typeof text === "string") serialized[field] = text.replace(PARAMS_IN_TEXT, "\nparams: [redacted]");
  }
  return serialized;
}

/** `destination` defaults to stdout; tests pass a stream to read what would have been logged. */
export function createLogger(level: string, name: string, destination?: DestinationStream): Logger {
  return pino(
    { level, name, redact: { paths: REDACT_PATHS, censor: "[redacted]" }, serializers: { err: serializeError } },
    destination,
  );
}

export type { Logger };
