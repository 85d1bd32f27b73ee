import { REQUEST_GUIDANCE } from "./error-guidance-requests.js";
import { STATE_GUIDANCE } from "./error-guidance-states.js";
import type { ErrorCode, ErrorGuidance } from "./errors.js";

/**
 * Per code: what it means, whether a spin's wager was taken, whether and how to retry, what to do.
 * A new code without its entry does not compile; apps/api/src/error-reference.ts renders this as
 * docs/errors.md and the page at /docs/errors.
 */
export const ERROR_GUIDANCE: Record<ErrorCode, ErrorGuidance> = { ...REQUEST_GUIDANCE, ...STATE_GUIDANCE };

/** The codes whose answer says nothing was done, so any request may be sent again as it is (the SDK's rule too). */
export const NOTHING_DONE_CODES: readonly ErrorCode[] = (Object.keys(ERROR_GUIDANCE) as ErrorCode[]).filter(
  (code) => ERROR_GUIDANCE[code].retry === "after-retry-after" || ERROR_GUIDANCE[code].retry === "backoff",
);
