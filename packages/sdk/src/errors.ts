/** One problem of a request the service refused, e.g. `{path: "wagerUsd", message: "…"}`. */
export interface ErrorDetail {
  path: string;
  message: string;
}

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
    super(`${input.errorCode}: ${input.message}`);
    this.status = input.status;
    this.errorCode = input.errorCode;
    this.requestId = input.requestId;
    this.details = input.details;
    this.retryAfterSeconds = input.retryAfterSeconds;
  }

  /** The specification's classification: 429 and 5xx may be retried; other 4xx need a changed request. */
  get retryable(): boolean {
    return this.status === 429 || this.status >= 500;
  }
}

/** The request never got an answer (connection refused or reset, DNS failure, timeout). */
export class PartnerNetworkError extends Error {
  override readonly name = "PartnerNetworkError";
}
