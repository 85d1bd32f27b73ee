import { ErrorCode } from "./errors.js";

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

const SEE_DETAILS = "`details` lists each problem by its JSON path; fix them and send a new request.";

/**
 * Per code: what it means, whether a spin's wager was taken, whether and how to retry, what to do.
 * A new code without its entry does not compile; apps/api/src/error-reference.ts renders this as
 * docs/errors.md and the page at /docs/errors.
 */
export const ERROR_GUIDANCE: Record<ErrorCode, ErrorGuidance> = {
  [ErrorCode.MissingApiKey]: {
    meaning: "No `X-API-Key` header (operator API and dashboard: no `Authorization: Bearer` token).",
    wagerDeducted: "no",
    retry: "no",
    action: "Send the key (or the operator token) with every request.",
  },
  [ErrorCode.InvalidApiKey]: {
    meaning:
      "The key is not one the service issued (a typo fails its checksum before any look-up), or it belongs to an " +
      "environment this deployment does not serve; for the operator API, a wrong token.",
    wagerDeducted: "no",
    retry: "no",
    action: "Check the key you deployed against the one you were given; ask your operator for a new one if lost.",
  },
  [ErrorCode.ApiKeyRevoked]: {
    meaning: "The key was revoked (every API process refuses it within 1 s).",
    wagerDeducted: "no",
    retry: "no",
    action: "Switch to the key that replaced it; ask your operator if you have none.",
  },
  [ErrorCode.ApiKeyExpired]: {
    meaning:
      "The key's `expiresAt` has passed (after a rotation: the overlap ended). `api_key.expiring` warned 30, 7 and 1 days before.",
    wagerDeducted: "no",
    retry: "no",
    action: "Switch to the rotated key; ask your operator to rotate or issue one.",
  },
  [ErrorCode.PartnerDeactivated]: {
    meaning: "Your partner account is deactivated: every key of it is refused until an operator activates it.",
    wagerDeducted: "no",
    retry: "no",
    action: "Contact your operator.",
  },
  [ErrorCode.GameNotOwned]: {
    meaning:
      "The `gameId` is not a game of yours in this key's environment (unknown, another partner's, or registered with " +
      "the other environment's key).",
    wagerDeducted: "no",
    retry: "no",
    action: "Use a `gameConfigId` from `GET /games` with the same key.",
  },
  [ErrorCode.CrossSiteRequest]: {
    meaning:
      "(Operator dashboard) a write that did not come from the dashboard's own page: another site's origin, or a " +
      "browser's cross-site fetch. Nothing was done.",
    retry: "no",
    action: "Use the dashboard's own buttons, or call the operator API with the token from your own tools.",
  },
  [ErrorCode.InvalidRequest]: {
    meaning:
      "The request is malformed: a field of the wrong type or format, more than 6 decimals, an unknown field, " +
      "malformed JSON, a body over 1 MiB, a query parameter out of range, or an `Idempotency-Key` already used " +
      "with another body (the message says which).",
    wagerDeducted: "no",
    retry: "no",
    action: `${SEE_DETAILS} A reused \`Idempotency-Key\`: use a new key for a new request.`,
  },
  [ErrorCode.RequiredFieldMissing]: {
    meaning: "A required field is missing, `null` or an empty string.",
    wagerDeducted: "no",
    retry: "no",
    action: SEE_DETAILS,
  },
  [ErrorCode.WagerOutOfRange]: {
    meaning:
      "A wager is zero, negative or outside the game's `[minWagerUsd, maxWagerUsd]`; or the spin (or a void) would " +
      "take one of the player's figures past 9,007,199,254.740991 USD, the most a JSON number shows exactly (the " +
      "message names the figure).",
    wagerDeducted: "no",
    retry: "no",
    action: "Send a wager within the game's limits (`GET /games/{gameId}`).",
  },
  [ErrorCode.InvalidParSheet]: {
    meaning:
      "The PAR sheet breaks a rule: its RTP differs from `certifiedRtp` by more than 0.00005, a tier is rarer than " +
      "1 in 100 million, a combination names an unknown symbol, and so on.",
    retry: "no",
    action: `${SEE_DETAILS} Every problem is listed at once.`,
  },
  [ErrorCode.InvalidDate]: {
    meaning: "A report date is not a calendar day as `YYYY-MM-DD`, or names a day that has not begun.",
    retry: "no",
    action: "Send a UTC day as `YYYY-MM-DD`.",
  },
  [ErrorCode.InvalidWebhookUrl]: {
    meaning:
      "The webhook URL is refused: not `https://` (sandbox also takes `http://localhost`, `http://127.0.0.1` and " +
      "`http://[::1]`), credentials in it, or a host that is or resolves to a private, loopback or link-local address.",
    retry: "no",
    action: `${SEE_DETAILS} See docs/webhooks.md, "URL rules".`,
  },
  [ErrorCode.InvalidWebhookEvents]: {
    meaning: "`events` is empty, or names an unknown or repeated event type.",
    retry: "no",
    action: "Subscribe to event types from docs/webhooks.md, each once.",
  },
  [ErrorCode.GameNameTaken]: {
    meaning: "You already have a game of that name in this environment.",
    retry: "no",
    action: "Choose another name, or use the existing game (`GET /games`).",
  },
  [ErrorCode.WagerBoundsInverted]: {
    meaning: "`minWagerUsd` is not below `maxWagerUsd`.",
    retry: "no",
    action: "Send a minimum below the maximum (or none).",
  },
  [ErrorCode.GameNotFound]: {
    meaning: "Operator API: no game has that id.",
    retry: "no",
    action: "Use an existing `gameConfigId`.",
  },
  [ErrorCode.GameInactive]: {
    meaning: "The game was made inactive (`PATCH /games/{gameId}` with `isActive: false`).",
    wagerDeducted: "no",
    retry: "no",
    action: "Activate the game again, or offer another.",
  },
  [ErrorCode.OutcomeQueueEmpty]: {
    meaning:
      "The game has no pre-computed outcome ready this instant (a burst outran generation, or the queue is being " +
      "rebuilt); generation was started. Nothing was taken.",
    wagerDeducted: "no",
    retry: "after-retry-after",
    action: "Send the spin again after `Retry-After` seconds, with the same `Idempotency-Key` if it had one.",
  },
  [ErrorCode.PlayerNotFound]: {
    meaning:
      "No such player of yours in this environment (players exist from their first spin), or the player is not in that free-round grant.",
    retry: "no",
    action: "Check the player id; a player with no spin yet has no record.",
  },
  [ErrorCode.ParSheetNotFound]: {
    meaning: "No PAR sheet of yours in this environment has that id.",
    retry: "no",
    action: "Upload the sheet with this key first (`POST /par-sheets`).",
  },
  [ErrorCode.WebhookNotFound]: {
    meaning: "No webhook of yours in this environment has that id (recover and rotate-secret: it was deleted).",
    retry: "no",
    action: "Use an id from `GET /webhooks`; register a new webhook for a deleted one.",
  },
  [ErrorCode.WebhookNotOwned]: {
    meaning: "The webhook belongs to another partner.",
    retry: "no",
    action: "Use an id from your own `GET /webhooks`.",
  },
  [ErrorCode.ParSheetNotActive]: {
    meaning:
      "The PAR sheet is not `ACTIVE`: in production a sheet waits in `PENDING_APPROVAL` until an operator approves it; a `RETIRED` sheet registers no game.",
    retry: "no",
    action: "Ask your operator to approve the sheet, then register the game.",
  },
  [ErrorCode.PartnerNotFound]: {
    meaning: "Operator API: no partner has that id.",
    retry: "no",
    action: "Use an id from `GET /partners`.",
  },
  [ErrorCode.PartnerInactive]: {
    meaning: "Operator API: the partner is deactivated, so no key can be issued or rotated for it.",
    retry: "no",
    action: "Activate the partner first.",
  },
  [ErrorCode.PartnerSlugTaken]: {
    meaning: "Operator API: another partner has that slug.",
    retry: "no",
    action: "Choose another slug.",
  },
  [ErrorCode.ApiKeyNotFound]: {
    meaning: "Operator API: the partner has no key with that id.",
    retry: "no",
    action: "Use an id from the partner's `GET /api-keys`.",
  },
  [ErrorCode.ApiKeyNotOwned]: {
    meaning: "Operator API: the key belongs to another partner.",
    retry: "no",
    action: "Use the key's own partner id.",
  },
  [ErrorCode.NoGamesRegistered]: {
    meaning: "Operator API: the partner has no registered game in that environment, so there is nothing to report.",
    retry: "no",
    action: "Nothing to settle; check the partner and environment.",
  },
  [ErrorCode.NotFound]: {
    meaning:
      "No such route (a mistyped path or method), or no such spin, block or delivery of yours in this environment.",
    retry: "no",
    action: "Check the path against the API reference, and the id against your records.",
  },
  [ErrorCode.BlockNotRevealed]: {
    meaning:
      "The block's seed and entries are shown only once every outcome of it (finite_pool: of its cycle) has been served or retired.",
    retry: "no",
    action:
      "Verify the spin's inclusion proof now (`GET /spins/{spinId}/proof`); fetch the entries once `seed` is not null.",
  },
  [ErrorCode.SpinNotVoidable]: {
    meaning: "The spin is older than the void window (72 hours by default; the message says this deployment's).",
    retry: "no",
    action: "Settle it with the player in your own wallet; it stays in the report of its day.",
  },
  [ErrorCode.FreeRoundUnavailable]: {
    meaning:
      "The free round cannot be spun: none left for the player, the grant expired or was cancelled, the player is " +
      "not in it, or it is for another game (the message says which). Nothing was used.",
    wagerDeducted: "no",
    retry: "no",
    action: "Check the player's rounds (`GET /free-rounds/{freeRoundsId}/players/{playerId}`).",
  },
  [ErrorCode.FreeRoundsNotFound]: {
    meaning: "No free-round grant of yours in this environment has that id.",
    wagerDeducted: "no",
    retry: "no",
    action: "Use a `freeRoundsId` from `POST /free-rounds` or `GET /free-rounds`, with the same key.",
  },
  [ErrorCode.ReportNotFound]: {
    meaning:
      "No settlement report of yours for that day in this environment (reports are made for days with registered games).",
    retry: "no",
    action: "Wait for the day's report (`settlement.report_ready`), or list them (`GET /settlements`).",
  },
  [ErrorCode.ReportAcknowledged]: {
    meaning: "The report is already acknowledged: it never changes again.",
    retry: "no",
    action: "Nothing to do (after a lost answer to your acknowledge, this is its result).",
  },
  [ErrorCode.ReportDisputed]: {
    meaning: "The report is already disputed and waits for the operator's reissue.",
    retry: "no",
    action:
      "Wait for the reissued report (status `PENDING`, a new `settlement.report_ready`), then acknowledge or dispute it.",
  },
  [ErrorCode.ReportStatusConflict]: {
    meaning:
      "The report's status does not allow this: acknowledging a disputed report, or (operator) regenerating an " +
      "acknowledged or disputed one, or reissuing one that is not disputed.",
    retry: "no",
    action: "Read the report (`GET /settlements/{reportDate}`) and act on its status.",
  },
  [ErrorCode.ReportProvisional]: {
    meaning:
      "The report's UTC day has not ended (`provisional: true`): its figures may still grow, so it cannot be " +
      "acknowledged or disputed yet. The message says when the day ends.",
    retry: "no",
    action:
      "Wait for the final report: the first settlement run after the day ends makes it final and sends " +
      "`settlement.report_ready` with `provisional: false`; acknowledge or dispute that one.",
  },
  [ErrorCode.SpinRateLimited]: {
    meaning: "Your spins went past the spin bucket (per partner and environment). Nothing was done.",
    wagerDeducted: "no",
    retry: "after-retry-after",
    action: "Wait `Retry-After` seconds, then send it again; pace spins by the `RateLimit` headers (docs/limits.md).",
  },
  [ErrorCode.RateLimited]: {
    meaning:
      "Your other requests went past the default bucket (per partner and environment); or, with no valid key, too " +
      "many unknown keys came from your address. Nothing was done.",
    retry: "after-retry-after",
    action:
      "Wait `Retry-After` seconds, then send it again; pace requests by the `RateLimit` headers (docs/limits.md).",
  },
  [ErrorCode.Internal]: {
    meaning: "An unexpected failure. The request may or may not have taken effect.",
    wagerDeducted: "unknown",
    retry: "idempotent-only",
    action:
      "Repeat a read, a delete, a void or a cancel as it is, and a spin or create with the same `Idempotency-Key` " +
      "(it answers the first result if one was recorded); before repeating any other write, look whether it took " +
      "effect (e.g. `GET /webhooks`). Quote the `requestId` to support.",
  },
  [ErrorCode.Maintenance]: {
    meaning:
      "Two cases, told apart by the message and `Retry-After`. Maintenance: the operator switched the partner API " +
      "off for a while (`Retry-After: 60`); nothing was done. Or (operator API and dashboard only) the deployment " +
      "has no `ADMIN_TOKEN`, so the operator API is disabled (no `Retry-After`).",
    wagerDeducted: "no",
    retry: "after-retry-after",
    action:
      "Maintenance: send it again after `Retry-After`. Operator API disabled: set `ADMIN_TOKEN` on the API " +
      "processes; retrying will not help until then.",
  },
  [ErrorCode.SpinFailed]: {
    meaning:
      "The spin was not recorded and nothing was deducted; its outcome went back to the queue. One exception: a " +
      "message saying the database did not confirm whether the spin was recorded means the spin may stand.",
    wagerDeducted: "no",
    retry: "idempotent-only",
    action:
      "Send the spin again with the same `Idempotency-Key`: you get its result if it was recorded after all, else " +
      "a new spin. Without a key you may send it again, except after the did-not-confirm message: read the " +
      "player's spins (`GET /players/{playerId}/spins`) first.",
  },
  [ErrorCode.AuthStoreFailed]: {
    meaning: "The key could not be checked (the store was unreachable). Nothing was done.",
    wagerDeducted: "no",
    retry: "backoff",
    action: "Send it again after a backoff.",
  },
  [ErrorCode.GameRegistrationFailed]: {
    meaning: "Reserved: the service answers an unexpected failure to register a game with KS-5001.",
    retry: "backoff",
    action: "Send it again after a backoff.",
  },
  [ErrorCode.ParSheetUploadFailed]: {
    meaning: "Reserved: the service answers an unexpected failure to upload a sheet with KS-5001.",
    retry: "backoff",
    action: "Send it again after a backoff.",
  },
  [ErrorCode.PartnerCreationFailed]: {
    meaning: "Operator API: the partner could not be created; its transaction rolled back.",
    retry: "backoff",
    action: "Send it again after a backoff.",
  },
  [ErrorCode.KeyIssueFailed]: {
    meaning: "Operator API: the key could not be issued or rotated; its transaction rolled back.",
    retry: "backoff",
    action: "Send it again after a backoff.",
  },
  [ErrorCode.ReportGenerationFailed]: {
    meaning: "Operator API: the report could not be generated; its transaction rolled back.",
    retry: "backoff",
    action:
      "Send it again after a backoff; the scheduled run retries by itself. Check the worker's log if it persists.",
  },
  [ErrorCode.PlayerResolutionFailed]: {
    meaning: "Reserved: a spin that fails answers KS-5003.",
    retry: "backoff",
    action: "Send it again after a backoff.",
  },
};

/** The codes whose answer says nothing was done, so any request may be sent again as it is (the SDK's rule too). */
export const NOTHING_DONE_CODES: readonly ErrorCode[] = (Object.keys(ERROR_GUIDANCE) as ErrorCode[]).filter(
  (code) => ERROR_GUIDANCE[code].retry === "after-retry-after" || ERROR_GUIDANCE[code].retry === "backoff",
);
