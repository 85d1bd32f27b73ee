/**
 * Resource shapes of the partner API (`/api/partner/v1`), as the service answers them. Money is USD.
 *
 * Each is named here from the wire types generated from the partner OpenAPI document
 * (./openapi.ts, `npm run sdk:types`), so a field the service adds, renames or retypes reaches the
 * SDK by regenerating; the fields' descriptions are the document's. Where the SDK is more precise
 * than the document (a union of inputs, `Date` accepted, hints a later release may add, a document
 * whose shape the service checks elsewhere), the refinement is written here with its reason.
 */
import type { operations } from "./openapi.js";
import type { Schema } from "./schema.js";

type Query<Operation extends keyof operations> = NonNullable<operations[Operation]["parameters"]["query"]>;

export type Environment = Schema<"Event">["environment"];

/** `page` from 1 (default 1), `limit` 1..100 (default 20). */
export interface PageRequest extends Query<"listGames"> {}

export interface PageInfo extends Pick<Schema<"GameList">, "page" | "limit" | "total"> {}

export interface Game extends Schema<"Game"> {}

export interface RegisterGameInput extends Schema<"RegisterGame"> {}

export interface UpdateGameInput extends Schema<"UpdateGame"> {}

export type ParSheetStatus = ParSheet["status"];

export interface ParSheet extends Schema<"ParSheet"> {}

/** The document says only "an object" of the stored document: the SDK types it as uploaded. */
export interface ParSheetWithDocument extends Omit<Schema<"ParSheetWithDocument">, "document"> {
  document: ParSheetDocument & Record<string, unknown>;
}

/** Arrays read-only, all the way down: a document written `as const` is accepted as it is. */
type ReadonlyArrays<T> = T extends readonly (infer Item)[]
  ? ReadonlyArray<ReadonlyArrays<Item>>
  : T extends object
    ? { [K in keyof T]: ReadonlyArrays<T[K]> }
    : T;
type UploadedParSheet = operations["uploadParSheet"]["requestBody"]["content"]["application/json"];

/** The PAR sheet document as uploaded (see the service's PAR sheet schema); the SDK only reads it. */
export interface ParSheetDocument extends ReadonlyArrays<UploadedParSheet> {}

type SpinRequest = Schema<"SpinRequest">;

/** The document's one spin body, split in the two spins the service tells apart (and without its nulls). */
interface SpinInputBase extends Pick<SpinRequest, "gameId" | "playerId"> {
  /**
   * Sandbox only: a tier of the game's PAR sheet (e.g. `"T6"`); the spin shows a random combination
   * of it instead of taking the next outcome, to test win animations and webhook receivers.
   */
  forceTier?: string;
}

/** A spin the player wagers on. */
export interface PaidSpinInput extends SpinInputBase {
  wagerUsd: number;
  freeRoundsId?: string;
}

/**
 * A spin that uses one of the player's rounds of a free-round grant (`freeRounds.grant`): the wager is
 * the grant's (if given it must equal it) and you pay it; the player's balance moves by the payout only.
 */
export interface FreeRoundSpinInput extends SpinInputBase {
  freeRoundsId: string;
  wagerUsd?: number;
}

export type SpinInput = PaidSpinInput | FreeRoundSpinInput;

type DocumentedHints = Schema<"Presentation">["animationHints"];

/** The document lists today's animation hints; a later release may add hints, which the SDK admits. */
interface AnimationHints extends DocumentedHints {
  [hint: string]: unknown;
}

interface Presentation extends Omit<Schema<"Presentation">, "animationHints"> {
  animationHints: AnimationHints;
}

/**
 * A spin as the service answers it. `voided` is null until the spin is voided (`voidSpin`), then
 * when and why; `freeRound` is the free round a spin with `freeRoundsId` used, null on every other.
 */
export interface SpinResult extends Omit<Schema<"SpinResult">, "presentation"> {
  presentation: Presentation;
}

/** A free-round spin's grant and the player's rounds of it left after the spin. */
export interface SpinFreeRound extends Schema<"SpinFreeRound"> {}

/** A spin's void: its balance, totals and settlement were reversed then; its outcome stays used. */
export interface SpinVoid extends Schema<"SpinVoid"> {}

/** Where the outcome was committed: entry `index` of block `blockId`. */
export interface SpinFairness extends NonNullable<Schema<"SpinResult">["fairness"]> {}

/** `exhausted`: every entry served or retired; `retired`: taken out of service unserved. */
export type BlockStatus = Block["status"];

/** A finite_pool block's cycle: one seed for every block cut from it, revealed when all are exhausted. */
export interface BlockCycle extends Schema<"BlockCycle"> {}

/**
 * A sealed block of outcomes. `merkleRoot` and `seedHash` are recorded when it is sealed, before any
 * entry is served, and never change; `seed` is null until the block (finite_pool: its cycle) is
 * revealed. Blocks sealed before provable fairness have null `merkleRoot`, `seedHash` and `seed`.
 */
export interface Block extends Schema<"Block"> {}

export interface RevealedEntry extends Schema<"RevealedEntry"> {}

/** A revealed block's entries, all of them in index order: what `verifyRevealedBlock` checks. */
export interface RevealedEntries extends Pick<Schema<"RevealedEntriesPage">, "blockId" | "seed" | "entries"> {}

/** One page of a revealed block's entries (`GET /games/{gameId}/blocks/{blockId}/entries`); `total` is the block's size. */
export interface RevealedEntriesPage extends Schema<"RevealedEntriesPage"> {}

/** RFC 9162 inclusion proof of a spin's entry in its block's Merkle tree. */
export interface SpinProof extends Schema<"SpinProof"> {}

/**
 * A spin with what checking it needs (`getSpin(spinId, { include: "proof" })` and the player's list
 * with `include: "proof"`): `verifySpinProof(spin, spin.proof, spin.block)`, no other request.
 */
export interface VerifiableSpin extends SpinResult, Pick<Schema<"VerifiableSpin">, "proof" | "block"> {}

/** A spin of a player's list: with `include: "proof"` its proof and block, with `replayLinks: true` a replay link. */
export interface ListedSpin extends VerifiableSpin, Pick<Schema<"ListedSpin">, "replayUrl"> {}

/** A page of a player's spins: `page`/`limit`, plus what to add to each spin (`replayLinks` a boolean, not text). */
export interface PlayerSpinsQuery extends PageRequest, Pick<Query<"listPlayerSpins">, "include"> {
  replayLinks?: boolean;
}

export interface CreateReplayLinkInput extends Schema<"CreateReplayLink"> {}

/** A replay link: a page anyone can open (no API key), the spin as played and its proof checked in the browser. */
export interface ReplayLink extends Schema<"ReplayLink"> {}

/**
 * A replay link's data (`GET ${url}.json`): the spin as its page shows it, no player id, with its proof
 * and block. (`proof` and `block` are written here: the document gives each as `allOf` of the schema and
 * a nullable object, which openapi-typescript renders as a type no value has.)
 */
export interface Replay extends Omit<Schema<"Replay">, "presentation" | "proof" | "block"> {
  presentation: Presentation;
  proof: SpinProof | null;
  block: Block | null;
}

/** `cancelled` once cancelled, else `expired` from `expiresAt` on, else `active`: as of the answer. */
export type FreeRoundStatus = FreeRoundGrant["status"];

/** Free rounds granted to players: spins of one game at one wager, paid by you. */
export interface FreeRoundGrant extends Schema<"FreeRoundGrant"> {}

/** `expiresAt` may also be a Date (sent as ISO 8601). */
export interface GrantFreeRoundsInput extends Omit<Schema<"GrantFreeRounds">, "expiresAt"> {
  /** ISO 8601 with a time zone, or a Date: in the future, at most 90 days ahead. */
  expiresAt: string | Date;
}

/** One player's rounds of a grant. */
export interface FreeRoundPlayer extends Schema<"FreeRoundPlayer"> {}

export interface Player extends Schema<"Player"> {}

export type WebhookEventType = Schema<"Event">["type"];

export interface Webhook extends Schema<"Webhook"> {}

/** Only the registration answer carries the secret: store it, it is never shown again. */
export interface CreatedWebhook extends Schema<"RegisteredWebhook"> {}

export interface RegisterWebhookInput extends Schema<"RegisterWebhook"> {}

/** `rateLimitPerSecond` is required here (the document leaves it optional): 1..1000, or null to stop pacing. */
export interface UpdateWebhookInput extends Required<Schema<"UpdateWebhook">> {}

/**
 * The `data` of a `webhook.disabled` event. (The document types every event's `data` as an object:
 * this one is written here, as the service's event envelope defines it.)
 */
export interface WebhookDisabledData {
  webhookId: string;
  url: string;
  disabledAt: string;
  reason: string;
  /** The last attempt's HTTP status (410 for a Gone); null when there was no answer. */
  lastResponseStatus: number | null;
}

export type DeliveryStatus = Delivery["status"];

export interface Delivery extends Schema<"WebhookDelivery"> {}

/** `since` may also be a Date (sent as ISO 8601). */
export interface RecoverWebhookInput extends Omit<Schema<"RecoverWebhook">, "since"> {
  /** ISO 8601 with a time zone, or a Date; at most 30 days back. */
  since: string | Date;
}

export interface WebhookRecovery extends Schema<"WebhookRecovery"> {}

export interface RotateWebhookSecretInput extends Schema<"RotateWebhookSecret"> {}

/** The new secret is shown only here: store it. */
export interface RotatedWebhookSecret extends Schema<"RotatedWebhookSecret"> {}

export type SettlementStatus = SettlementReport["status"];

/** A day's figures, of the whole report or of one of its games. */
export interface SettlementFigures extends Omit<Schema<"SettlementGameFigures">, "gameId"> {}

export interface SettlementExactAmounts extends Schema<"SettlementExactAmounts"> {}

export interface VoidSpinInput extends Schema<"VoidSpin"> {}

export interface SettlementReport extends Schema<"SettlementReport"> {}

/**
 * The body of every webhook delivery, and an entry of the event log (`listEvents`, `events`); verify a
 * delivery's signature over the raw bytes before parsing it. `T` types `data` for an event you know.
 */
export interface WebhookEvent<T = Record<string, unknown>> extends Omit<Schema<"Event">, "data"> {
  data: T;
}

export interface EventLogQuery extends Query<"listEvents"> {}

export interface EventLogPage extends Omit<Schema<"EventLog">, "events"> {
  /** In ascending sequence. */
  events: WebhookEvent[];
}
