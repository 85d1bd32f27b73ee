/**
 * Every error the service can answer with: one code, one HTTP status, one message.
 * The table is the specification's; routes throw `ServiceError` and one handler renders it.
 */
export const ERROR_CODES = {
  "KS-4001": { status: 401, message: "Missing X-API-Key header" },
  "KS-4002": { status: 401, message: "Invalid API key" },
  "KS-4003": { status: 401, message: "API key is revoked or inactive" },
  "KS-4004": { status: 401, message: "API key has expired" },
  "KS-4005": { status: 401, message: "Partner account is deactivated" },
  "KS-4006": { status: 403, message: "Game not found or not registered to this partner" },
  "KS-4101": { status: 400, message: "Request validation failed" },
  "KS-4102": { status: 400, message: "Required field missing" },
  "KS-4103": { status: 400, message: "Wager amount out of range" },
  "KS-4104": { status: 400, message: "Invalid PAR sheet data" },
  "KS-4105": { status: 400, message: "Invalid date format" },
  "KS-4106": { status: 400, message: "Invalid webhook URL" },
  "KS-4107": { status: 400, message: "Invalid webhook event types" },
  "KS-4108": { status: 409, message: "Game config name already exists" },
  "KS-4109": { status: 400, message: "minWagerUsd must be less than maxWagerUsd" },
  "KS-4201": { status: 404, message: "Game not found" },
  "KS-4202": { status: 400, message: "Game is not active" },
  "KS-4203": { status: 503, message: "Game outcome queue exhausted (block generation is automatic)" },
  "KS-4204": { status: 404, message: "Player not found" },
  "KS-4205": { status: 404, message: "PAR sheet not found (upload one first)" },
  "KS-4206": { status: 404, message: "Webhook not found" },
  "KS-4207": { status: 403, message: "Webhook does not belong to this partner" },
  "KS-4208": { status: 400, message: "PAR sheet is not active" },
  "KS-4209": { status: 404, message: "Partner not found" },
  "KS-4210": { status: 403, message: "Partner is deactivated" },
  "KS-4211": { status: 409, message: "Partner with this slug already exists" },
  "KS-4212": { status: 404, message: "API key not found" },
  "KS-4213": { status: 403, message: "API key does not belong to this partner" },
  "KS-4214": { status: 404, message: "No games registered for this partner" },
  "KS-4215": { status: 404, message: "Resource not found" },
  "KS-4216": { status: 409, message: "Block not revealed yet (outcomes still being served)" },
  "KS-4217": { status: 409, message: "Spin can no longer be voided" },
  "KS-4301": { status: 404, message: "Settlement report not found" },
  "KS-4302": { status: 409, message: "Settlement report already acknowledged" },
  "KS-4303": { status: 409, message: "Settlement report already disputed" },
  "KS-4304": {
    status: 409,
    message:
      "Settlement report status does not allow this action (only GENERATED or PENDING reports can be acknowledged or disputed)",
  },
  "KS-4291": { status: 429, message: "Rate limit exceeded for spin requests" },
  "KS-4292": { status: 429, message: "Rate limit exceeded for API requests" },
  "KS-5001": { status: 500, message: "Internal server error" },
  "KS-5002": { status: 503, message: "Service temporarily unavailable (maintenance)" },
  "KS-5003": { status: 500, message: "Spin processing failed (wager not deducted)" },
  "KS-5004": { status: 500, message: "Authentication service error" },
  "KS-5005": { status: 500, message: "Failed to register game" },
  "KS-5006": { status: 500, message: "Failed to upload PAR sheet" },
  "KS-5007": { status: 500, message: "Failed to create partner" },
  "KS-5008": { status: 500, message: "Failed to issue API key" },
  "KS-5009": { status: 500, message: "Failed to generate settlement report" },
  "KS-5010": { status: 500, message: "Failed to resolve or create partner player" },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;
export type ErrorStatus = (typeof ERROR_CODES)[ErrorCode]["status"];

/** One problem in a request, located by its JSON path (e.g. `prizeTiers[2].weight`). */
export interface ErrorDetail {
  path: string;
  message: string;
}

export class ServiceError extends Error {
  readonly code: ErrorCode;
  readonly status: ErrorStatus;
  readonly details: ErrorDetail[] | undefined;
  /** Seconds the caller should wait before retrying (rendered as `Retry-After`). */
  readonly retryAfterSeconds: number | undefined;

  constructor(
    code: ErrorCode,
    options: { message?: string; details?: ErrorDetail[]; retryAfterSeconds?: number; cause?: unknown } = {},
  ) {
    super(options.message ?? ERROR_CODES[code].message, { cause: options.cause });
    this.name = "ServiceError";
    this.code = code;
    this.status = ERROR_CODES[code].status;
    this.details = options.details;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}
