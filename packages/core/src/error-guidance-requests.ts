import { ErrorCode, type ErrorGuidance } from "./errors.js";

const SEE_DETAILS = "`details` lists each problem by its JSON path; fix them and send a new request.";

/** The guidance of the codes about the caller and its request (KS-40xx, KS-41xx): see ERROR_GUIDANCE. */
export const REQUEST_GUIDANCE = {
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
} satisfies Partial<Record<ErrorCode, ErrorGuidance>>;
