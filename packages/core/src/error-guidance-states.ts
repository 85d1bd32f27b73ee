import { ErrorCode, type ErrorGuidance } from "./errors.js";

/** The guidance of the codes about resources, limits and the service (KS-42xx..KS-5xxx): see ERROR_GUIDANCE. */
export const STATE_GUIDANCE = {
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
  [ErrorCode.WagerAboveJurisdictionLimit]: {
    meaning:
      "The wager is above the most the player's jurisdiction allows a spin (`details`: its code and `maxWagerUsd`).",
    wagerDeducted: "no",
    retry: "no",
    action: "Offer the player stakes up to the jurisdiction's `maxWagerUsd` (`GET /jurisdictions`).",
  },
  [ErrorCode.PlayerRestricted]: {
    meaning: "The player is self-excluded or cooling off (`details`: which, and until when). Nothing was written.",
    wagerDeducted: "no",
    retry: "no",
    action: "Do not offer play until the time in `details.until`; `GET /players/{playerId}/protection` shows it.",
  },
  [ErrorCode.PlayerLimitReached]: {
    meaning:
      "The wager would take the player's net loss or total wagers past one of his limits in the current UTC day, " +
      "ISO week or month (`details`: limit, period, `remainingUsd`). Nothing was written.",
    wagerDeducted: "no",
    retry: "no",
    action: "Offer at most `remainingUsd`, or play again in the next period.",
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
  [ErrorCode.RoundTooSoon]: {
    meaning:
      "The player's previous round started less than his jurisdiction's `minRoundMs` ago. Nothing was done and no " +
      "outcome was used.",
    wagerDeducted: "no",
    retry: "after-retry-after",
    action: "Wait `details.retryAfterMs` (or `Retry-After` seconds), then send the spin again.",
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
} satisfies Partial<Record<ErrorCode, ErrorGuidance>>;
