/** One problem of a request the service refused, e.g. `{path: "wagerUsd", message: "…"}`. */
export interface ErrorDetail {
  path: string;
  message: string;
}

/**
 * The codes whose answer says nothing was done, so any request may be sent again as it is (429s
 * aside): the error reference's "after `Retry-After`" and "after a backoff" codes (docs/errors.md).
 */
export const NOTHING_DONE_CODES: ReadonlySet<string> = new Set([
  "KS-4203",
  "KS-5002",
  "KS-5004",
  "KS-5005",
  "KS-5006",
  "KS-5007",
  "KS-5008",
  "KS-5009",
  "KS-5010",
]);

/**
 * An error answer of the service: `errorCode` is the stable `KS-XXXX` code to branch on;
 * `requestId` is what to quote to support.
 */
export class PartnerApiError extends Error {
  override readonly name = "PartnerApiError";
  readonly status: number;
  readonly errorCode: string;
  readonly requestId: string | undefined;
  readonly details: ErrorDetail[] | undefined;
  /** Seconds the service asked to wait (`Retry-After`), when it did. */
  readonly retryAfterSeconds: number | undefined;

  constructor(input: {
    status: number;
    errorCode: string;
    message: string;
    requestId?: string | undefined;
    details?: ErrorDetail[] | undefined;
    retryAfterSeconds?: number | undefined;
  }) {
    // The service's words alone: the code is `errorCode` (logging `${status} ${errorCode} ${message}`
    // must not print it twice); the stack's first line names it, as Node's own coded errors do.
    super(input.message);
    this.stack = this.stack?.replace(/^PartnerApiError:/, `PartnerApiError [${input.errorCode}]:`);
    this.status = input.status;
    this.errorCode = input.errorCode;
    this.requestId = input.requestId;
    this.details = input.details;
    this.retryAfterSeconds = input.retryAfterSeconds;
  }

  /**
   * Nothing was done, so the same request may be sent again as it is (after `retryAfterSeconds` when
   * given): 429 and the codes that say so. Other 5xx (KS-5001, KS-5003) may have taken effect: repeat
   * only a read or a request with the same `Idempotency-Key` (docs/errors.md, "Retrying: the rule").
   */
  get retryable(): boolean {
    return this.status === 429 || NOTHING_DONE_CODES.has(this.errorCode);
  }
}

/** The request never got an answer (connection refused or reset, DNS failure, timeout). */
export class PartnerNetworkError extends Error {
  override readonly name = "PartnerNetworkError";
}
