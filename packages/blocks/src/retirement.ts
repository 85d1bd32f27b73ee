import type { Database } from "@outcomes/db";
import type { RedisClient, RedisKeys } from "@outcomes/queue";
import type { Logger } from "@outcomes/runtime";

/** What the reveal sweep and its lost-entry check run on. */
export interface RevealDeps {
  db: Database;
  redis: RedisClient;
  keys: RedisKeys;
  logger: Logger;
}

/**
 * How long after its last index was taken a block waits before its unused entries are retired.
 * An entry given back after a failed spin goes to the front of the queue, so on a game being
 * played it is served long before this; what is left is stranded (an API process died between
 * taking it and committing its spin) or waits on a game nobody plays. A block whose last index
 * itself was lost waits as long from when its unused entries were first seen gone (lost-entries.ts).
 */
export const RETIRE_AFTER_MS = 60_000;
/**
 * Between taking a block's unused entries out of the queue and revealing it: longer than a spin
 * can hold an outcome it took (a 5 s connection wait, then statements of at most 15 s), so none
 * still in flight commits, or is given back, after its seed is shown.
 */
export const RETIRE_SETTLE_MS = 60_000;
/** The retirement marker outlives any give-back by far; then Redis forgets it. */
export const RETIRED_MARKER_TTL_MS = 24 * 3600 * 1000;
