/**
 * Every error the service can answer with, by name where it is thrown (`ErrorCode.GameNotOwned`)
 * and by code on the wire (`KS-4006`): the specification's table. Routes, repositories and workers
 * throw `ServiceError`; one handler renders it, with the HTTP status the API layer maps each code to
 * (apps/api/src/error-status.ts). A new code also needs its guidance (error-guidance.ts: it does not
 * compile without) and `npm run docs:errors` (docs/errors.md; a test fails until it is run).
 */
export const ErrorCode = {
  MissingApiKey: "KS-4001",
  InvalidApiKey: "KS-4002",
  ApiKeyRevoked: "KS-4003",
  ApiKeyExpired: "KS-4004",
  PartnerDeactivated: "KS-4005",
  GameNotOwned: "KS-4006",
  CrossSiteRequest: "KS-4007",
  InvalidRequest: "KS-4101",
  RequiredFieldMissing: "KS-4102",
  WagerOutOfRange: "KS-4103",
  InvalidParSheet: "KS-4104",
  InvalidDate: "KS-4105",
  InvalidWebhookUrl: "KS-4106",
  InvalidWebhookEvents: "KS-4107",
  GameNameTaken: "KS-4108",
  WagerBoundsInverted: "KS-4109",
  GameNotFound: "KS-4201",
  GameInactive: "KS-4202",
  OutcomeQueueEmpty: "KS-4203",
  PlayerNotFound: "KS-4204",
  ParSheetNotFound: "KS-4205",
  WebhookNotFound: "KS-4206",
  WebhookNotOwned: "KS-4207",
  ParSheetNotActive: "KS-4208",
  PartnerNotFound: "KS-4209",
  PartnerInactive: "KS-4210",
  PartnerSlugTaken: "KS-4211",
  ApiKeyNotFound: "KS-4212",
  ApiKeyNotOwned: "KS-4213",
  NoGamesRegistered: "KS-4214",
  NotFound: "KS-4215",
  BlockNotRevealed: "KS-4216",
  SpinNotVoidable: "KS-4217",
  FreeRoundUnavailable: "KS-4218",
  FreeRoundsNotFound: "KS-4219",
  WagerAboveJurisdictionLimit: "KS-4220",
  PlayerRestricted: "KS-4221",
  PlayerLimitReached: "KS-4222",
  ReportNotFound: "KS-4301",
  ReportAcknowledged: "KS-4302",
  ReportDisputed: "KS-4303",
  ReportStatusConflict: "KS-4304",
  ReportProvisional: "KS-4305",
  SpinRateLimited: "KS-4291",
  RateLimited: "KS-4292",
  RoundTooSoon: "KS-4293",
  Internal: "KS-5001",
  Maintenance: "KS-5002",
  SpinFailed: "KS-5003",
  AuthStoreFailed: "KS-5004",
  GameRegistrationFailed: "KS-5005",
  ParSheetUploadFailed: "KS-5006",
  PartnerCreationFailed: "KS-5007",
  KeyIssueFailed: "KS-5008",
  ReportGenerationFailed: "KS-5009",
  PlayerResolutionFailed: "KS-5010",
} as const;

export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** Each code's message when the thrower gives none. */
export const ERROR_MESSAGES: Record<ErrorCode, string> = {
  [ErrorCode.MissingApiKey]: "Missing X-API-Key header",
  [ErrorCode.InvalidApiKey]: "Invalid API key",
  [ErrorCode.ApiKeyRevoked]: "API key is revoked or inactive",
  [ErrorCode.ApiKeyExpired]: "API key has expired",
  [ErrorCode.PartnerDeactivated]: "Partner account is deactivated",
  [ErrorCode.GameNotOwned]: "Game not found or not registered to this partner",
  [ErrorCode.CrossSiteRequest]:
    "Cross-site request refused (dashboard writes must come from the dashboard's own origin)",
  [ErrorCode.InvalidRequest]: "Request validation failed",
  [ErrorCode.RequiredFieldMissing]: "Required field missing",
  [ErrorCode.WagerOutOfRange]: "Wager amount out of range",
  [ErrorCode.InvalidParSheet]: "Invalid PAR sheet data",
  [ErrorCode.InvalidDate]: "Invalid date format",
  [ErrorCode.InvalidWebhookUrl]: "Invalid webhook URL",
  [ErrorCode.InvalidWebhookEvents]: "Invalid webhook event types",
  [ErrorCode.GameNameTaken]: "Game config name already exists",
  [ErrorCode.WagerBoundsInverted]: "minWagerUsd must be less than maxWagerUsd",
  [ErrorCode.GameNotFound]: "Game not found",
  [ErrorCode.GameInactive]: "Game is not active",
  [ErrorCode.OutcomeQueueEmpty]: "Game outcome queue exhausted (block generation is automatic)",
  [ErrorCode.PlayerNotFound]: "Player not found",
  [ErrorCode.ParSheetNotFound]: "PAR sheet not found (upload one first)",
  [ErrorCode.WebhookNotFound]: "Webhook not found",
  [ErrorCode.WebhookNotOwned]: "Webhook does not belong to this partner",
  [ErrorCode.ParSheetNotActive]: "PAR sheet is not active",
  [ErrorCode.PartnerNotFound]: "Partner not found",
  [ErrorCode.PartnerInactive]: "Partner is deactivated",
  [ErrorCode.PartnerSlugTaken]: "Partner with this slug already exists",
  [ErrorCode.ApiKeyNotFound]: "API key not found",
  [ErrorCode.ApiKeyNotOwned]: "API key does not belong to this partner",
  [ErrorCode.NoGamesRegistered]: "No games registered for this partner",
  [ErrorCode.NotFound]: "Resource not found",
  [ErrorCode.BlockNotRevealed]: "Block not revealed yet (outcomes still being served)",
  [ErrorCode.SpinNotVoidable]: "Spin can no longer be voided",
  [ErrorCode.FreeRoundUnavailable]: "Free round not available",
  [ErrorCode.FreeRoundsNotFound]: "Free rounds not found",
  [ErrorCode.WagerAboveJurisdictionLimit]: "Wager above the jurisdiction's limit",
  [ErrorCode.PlayerRestricted]: "Player is restricted",
  [ErrorCode.PlayerLimitReached]: "Player limit reached",
  [ErrorCode.ReportNotFound]: "Settlement report not found",
  [ErrorCode.ReportAcknowledged]: "Settlement report already acknowledged",
  [ErrorCode.ReportDisputed]: "Settlement report already disputed",
  [ErrorCode.ReportStatusConflict]:
    "Settlement report status does not allow this action (only GENERATED or PENDING reports can be acknowledged or disputed)",
  [ErrorCode.ReportProvisional]: "Report is provisional until its day ends",
  [ErrorCode.SpinRateLimited]: "Rate limit exceeded for spin requests",
  [ErrorCode.RateLimited]: "Rate limit exceeded for API requests",
  [ErrorCode.RoundTooSoon]: "Round started too soon",
  [ErrorCode.Internal]: "Internal server error",
  [ErrorCode.Maintenance]: "Service temporarily unavailable (maintenance)",
  [ErrorCode.SpinFailed]: "Spin processing failed (wager not deducted)",
  [ErrorCode.AuthStoreFailed]: "Authentication service error",
  [ErrorCode.GameRegistrationFailed]: "Failed to register game",
  [ErrorCode.ParSheetUploadFailed]: "Failed to upload PAR sheet",
  [ErrorCode.PartnerCreationFailed]: "Failed to create partner",
  [ErrorCode.KeyIssueFailed]: "Failed to issue API key",
  [ErrorCode.ReportGenerationFailed]: "Failed to generate settlement report",
  [ErrorCode.PlayerResolutionFailed]: "Failed to resolve or create partner player",
};

/** One problem in a request, located by its JSON path (e.g. `prizeTiers[2].weight`). */
export interface ErrorDetail {
  path: string;
  message: string;
}

/** The facts of a refusal that is not about the request's fields (e.g. `{limit, period, remainingUsd}`). */
export type ErrorFacts = Record<string, string | number | null>;

export class ServiceError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetail[] | ErrorFacts | undefined;
  /** Seconds the caller should wait before retrying (rendered as `Retry-After`). */
  readonly retryAfterSeconds: number | undefined;

  constructor(
    code: ErrorCode,
    options: {
      message?: string;
      details?: ErrorDetail[] | ErrorFacts;
      retryAfterSeconds?: number;
      cause?: unknown;
    } = {},
  ) {
    super(options.message ?? ERROR_MESSAGES[code], { cause: options.cause });
    this.name = "ServiceError";
    this.code = code;
    this.details = options.details;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}

/**
 * Whether the same request may be sent again, the one retry rule every document and the SDK follow
 * (docs/errors.md, generated from this table):
 * - `no`: the request (or the state it meets) must change first;
 * - `after-retry-after`: nothing was done; send it again after the `Retry-After` seconds;
 * - `backoff`: nothing was done; send it again after an exponential backoff with jitter;
 * - `idempotent-only`: it may have been done; repeat only a read, a request that is idempotent by
 *   nature (a delete, a void, a cancel) or one with the same `Idempotency-Key` and body.
 */
export type RetryAdvice = "no" | "after-retry-after" | "backoff" | "idempotent-only";

export interface ErrorGuidance {
  /** What happened, in the caller's words. */
  meaning: string;
  /** For a code `POST /spins` can answer: whether the player's wager counts as taken. Absent: no spin answers it. */
  wagerDeducted?: "no" | "unknown";
  retry: RetryAdvice;
  /** What the caller does about it. */
  action: string;
}
