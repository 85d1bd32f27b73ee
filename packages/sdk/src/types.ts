import type { RefusedSpins, SpinSession } from "./protection.js";
/** Resource shapes of the partner API (`/api/partner/v1`), as the service answers them. Money is USD. */

export type Environment = "sandbox" | "production";

export interface PageRequest {
  /** From 1 (default 1). */
  page?: number;
  /** 1..100 (default 20). */
  limit?: number;
}

export interface PageInfo {
  page: number;
  limit: number;
  total: number;
}

export interface Game {
  gameConfigId: number;
  name: string;
  parSheetId: string;
  minWagerUsd: number | null;
  maxWagerUsd: number;
  largeWinThresholdUsd: number;
  isActive: boolean;
  rtp: number;
  createdAt: string;
}

export interface RegisterGameInput {
  parSheetId: string;
  name: string;
  /** Absent or null: any positive wager up to the maximum. */
  minWagerUsd?: number | null;
  maxWagerUsd: number;
  /** Absent or null: the deployment's default. */
  largeWinThresholdUsd?: number | null;
}

export interface UpdateGameInput {
  isActive?: boolean;
  minWagerUsd?: number | null;
  maxWagerUsd?: number;
  largeWinThresholdUsd?: number | null;
}

export type ParSheetStatus = "ACTIVE" | "PENDING_APPROVAL" | "RETIRED";

export interface ParSheet {
  id: string;
  name: string;
  version: string;
  status: ParSheetStatus;
  drawMode: "independent" | "finite_pool";
  rtp: number;
  certifiedRtp: number;
  hitFrequency: number;
  volatility: number;
  createdAt: string;
  approvedAt: string | null;
  retiredAt: string | null;
}

export interface ParSheetWithDocument extends ParSheet {
  document: ParSheetDocument & Record<string, unknown>;
}

/** The PAR sheet document as uploaded (see the service's PAR sheet schema). */
export interface ParSheetDocument {
  name: string;
  version: string;
  layout: { reels: number; rows: number };
  symbols: ReadonlyArray<{ id: string; name: string }>;
  prizeTiers: ReadonlyArray<{ tier: string; multiplier: number; weight: number }>;
  combinations: ReadonlyArray<{ tier: string; symbols: readonly string[]; weight: number }>;
  certifiedRtp: number;
  drawMode?: "independent" | "finite_pool";
}

interface SpinInputBase {
  gameId: number;
  playerId: string;
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

export interface SpinResult {
  spinId: string;
  gameId: number;
  playerId: string;
  wagerUsd: number;
  outcome: { prizeTier: string; multiplier: number; payoutUsd: number };
  presentation: {
    comboString: string;
    /** One array per reel: the visible symbol ids, top to bottom; the payline is the middle row. */
    reelSymbols: string[][];
    animationHints: {
      winLine: number[] | null;
      celebration: "none" | "small" | "big" | "mega";
      highlight: boolean[][];
      [hint: string]: unknown;
    };
  };
  balance: { balanceUsd: number; currency: "USD" };
  createdAt: string;
  /** Where the outcome was committed: entry `index` of block `blockId` (`null` for a forced sandbox spin). */
  fairness: SpinFairness | null;
  /** True for a sandbox spin with `forceTier`. */
  forced: boolean;
  /**
   * null until the spin is voided (`voidSpin`), then when and why. (A deployment still rolling out
   * the release that brought voids leaves it out until its operator runs `release finish`.)
   */
  voided: SpinVoid | null;
  /** The free round the spin used (a spin with `freeRoundsId`); null on every other spin. */
  freeRound: SpinFreeRound | null;
  /** On a spin's answer (not on reads): the player's session after it (docs/jurisdictions.md). */
  session?: SpinSession;
}

/** A free-round spin's grant and the player's rounds of it left after the spin. */
export interface SpinFreeRound {
  freeRoundsId: string;
  roundsLeft: number;
}

/** A spin's void: its balance, totals and settlement were reversed then; its outcome stays used. */
export interface SpinVoid {
  voidedAt: string;
  reason: string;
}

export interface SpinFairness {
  blockId: number;
  index: number;
}

/** `exhausted`: every entry served or retired; `retired`: taken out of service unserved. */
export type BlockStatus = "ready" | "serving" | "exhausted" | "retired";

/** A finite_pool block's cycle: one seed for every block cut from it, revealed when all are exhausted. */
export interface BlockCycle {
  cycleId: number;
  seedHash: string | null;
  /** Blocks cut from the cycle so far. */
  blocks: number;
  revealed: boolean;
  /** Position of this block's first entry in the cycle (what `deriveBlockEntries` needs). */
  offset: number;
}

/**
 * A sealed block of outcomes. `merkleRoot` and `seedHash` are recorded when it is sealed, before any
 * entry is served, and never change; `seed` is null until the block (finite_pool: its cycle) is
 * revealed. Blocks sealed before provable fairness have null `merkleRoot`, `seedHash` and `seed`.
 */
export interface Block {
  blockId: number;
  gameId: number;
  sequence: number;
  size: number;
  status: BlockStatus;
  drawMode: "independent" | "finite_pool";
  merkleRoot: string | null;
  seedHash: string | null;
  sealedAt: string;
  firstServedAt: string | null;
  exhaustedAt: string | null;
  revealedAt: string | null;
  seed: string | null;
  /** finite_pool blocks only. */
  cycle?: BlockCycle;
}

export interface RevealedEntry {
  index: number;
  prizeTier: string;
  multiplier: number;
  reelSymbols: string[][];
  /** 16 bytes, lowercase hex. */
  salt: string;
  /** The spin served this entry; null for an entry retired unserved. */
  spinId: string | null;
  /** That spin was voided: the entry stays used (never served again) and its proof still verifies. */
  voided: boolean;
}

/** A revealed block's entries, all of them in index order: what `verifyRevealedBlock` checks. */
export interface RevealedEntries {
  blockId: number;
  seed: string;
  entries: RevealedEntry[];
}

/** One page of a revealed block's entries (`GET /games/{gameId}/blocks/{blockId}/entries`); `total` is the block's size. */
export interface RevealedEntriesPage extends RevealedEntries, PageInfo {}

/** RFC 9162 inclusion proof of a spin's entry in its block's Merkle tree. */
export interface SpinProof {
  spinId: string;
  blockId: number;
  index: number;
  outcomeText: string;
  salt: string;
  leaf: string;
  /** Sibling hashes, leaf to root. */
  auditPath: string[];
  merkleRoot: string;
  treeSize: number;
}

/**
 * A spin with what checking it needs (`getSpin(spinId, { include: "proof" })` and the player's list
 * with `include: "proof"`): `verifySpinProof(spin, spin.proof, spin.block)`, no other request.
 */
export interface VerifiableSpin extends SpinResult {
  /** With `include: "proof"`: the inclusion proof; null for a forced spin or one whose block predates fairness. */
  proof?: SpinProof | null;
  /** With `include: "proof"`: the spin's block (its commitments; `seed` once revealed); null when `proof` is. */
  block?: Block | null;
}

/** A spin of a player's list: with `include: "proof"` its proof and block, with `replayLinks: true` a replay link. */
export interface ListedSpin extends VerifiableSpin {
  /** A replay link with the default expiry (168 hours). */
  replayUrl?: string;
}

/** A page of a player's spins: `page`/`limit`, plus what to add to each spin. */
export interface PlayerSpinsQuery extends PageRequest {
  include?: "proof";
  replayLinks?: boolean;
}

export interface CreateReplayLinkInput {
  /** 1..2160 hours (90 days); default 168 (7 days). */
  expiresInHours?: number;
}

/** A replay link: a page anyone can open (no API key), the spin as played and its proof checked in the browser. */
export interface ReplayLink {
  /** The page; `${url}.json` is its data (`Replay`), fetchable from any origin. */
  url: string;
  /** After this the link answers 404, as an unknown one. */
  expiresAt: string;
}

/** A replay link's data (`GET ${url}.json`): the spin as its page shows it, no player id, with its proof and block. */
export interface Replay {
  spinId: string;
  environment: Environment;
  game: { gameId: number; name: string; symbols: { id: string; name: string }[] };
  createdAt: string;
  wagerUsd: number;
  outcome: SpinResult["outcome"];
  presentation: SpinResult["presentation"];
  balance: SpinResult["balance"];
  forced: boolean;
  /** A free round: the partner paid the wager. */
  freeRound: boolean;
  voided: SpinVoid | null;
  fairness: SpinFairness | null;
  proof: SpinProof | null;
  block: Block | null;
  expiresAt: string;
}

/** `cancelled` once cancelled, else `expired` from `expiresAt` on, else `active`: as of the answer. */
export type FreeRoundStatus = "active" | "expired" | "cancelled";

/** Free rounds granted to players: spins of one game at one wager, paid by you. */
export interface FreeRoundGrant {
  freeRoundsId: string;
  gameId: number;
  wagerUsd: number;
  /** Rounds per player. */
  rounds: number;
  playerCount: number;
  expiresAt: string;
  status: FreeRoundStatus;
  createdAt: string;
  cancelledAt: string | null;
}

export interface GrantFreeRoundsInput {
  gameId: number;
  /** 1..1000 distinct player ids of yours (players need not have spun yet). */
  playerIds: string[];
  /** Rounds per player, 1..1000. */
  rounds: number;
  /** Within the game's wager limits, at most 6 decimals. */
  wagerUsd: number;
  /** ISO 8601 with a time zone, or a Date: in the future, at most 90 days ahead. */
  expiresAt: string | Date;
}

/** One player's rounds of a grant. */
export interface FreeRoundPlayer {
  freeRoundsId: string;
  playerId: string;
  rounds: number;
  /** Rounds spun and not voided. */
  roundsUsed: number;
  /** rounds − roundsUsed while the grant is active; 0 once it is expired or cancelled. */
  roundsLeft: number;
  /** The payouts of the rounds used. */
  paidUsd: number;
}

export interface Player {
  playerId: string;
  balanceUsd: number;
  totalSpins: number;
  totalWageredUsd: number;
  totalPaidUsd: number;
  createdAt: string;
}

export type WebhookEventType =
  | "spin.large_win"
  | "settlement.report_ready"
  | "block.low_reserve"
  | "api_key.expiring"
  | "spin.voided"
  | "webhook.disabled";

export interface Webhook {
  id: string;
  url: string;
  events: WebhookEventType[];
  /** False once deleted or disabled: nothing is sent to it. */
  isActive: boolean;
  /** Deliveries per second at most (1..1000); null: not paced. */
  rateLimitPerSecond: number | null;
  createdAt: string;
  deletedAt: string | null;
  /** When the service disabled it (failing too long, or a 410 Gone); `enable` clears it. */
  disabledAt: string | null;
  disabledReason: string | null;
}

/** Only the registration answer carries the secret: store it, it is never shown again. */
export interface CreatedWebhook extends Omit<Webhook, "deletedAt" | "disabledAt" | "disabledReason"> {
  secret: string;
}

export interface RegisterWebhookInput {
  url: string;
  events: WebhookEventType[];
  /** Deliveries per second at most (1..1000); leave out for none. Available once release 3's rollout finished. */
  rateLimitPerSecond?: number;
}

export interface UpdateWebhookInput {
  /** 1..1000, or null to stop pacing. */
  rateLimitPerSecond: number | null;
}

/** The `data` of a `webhook.disabled` event. */
export interface WebhookDisabledData {
  webhookId: string;
  url: string;
  disabledAt: string;
  reason: string;
  /** The last attempt's HTTP status (410 for a Gone); null when there was no answer. */
  lastResponseStatus: number | null;
}

export type DeliveryStatus = "pending" | "retrying" | "succeeded" | "failed";

export interface Delivery {
  id: string;
  event: WebhookEventType;
  status: DeliveryStatus;
  attempts: number;
  maxAttempts: number;
  lastResponseStatus: number | null;
  lastError: string | null;
  nextAttemptAt: string | null;
  createdAt: string;
  completedAt: string | null;
}

export interface RecoverWebhookInput {
  /** ISO 8601 with a time zone, or a Date; at most 30 days back. */
  since: string | Date;
}

export interface WebhookRecovery {
  /** Failed deliveries that will be delivered again; the service makes them after answering. */
  recovered: number;
}

export interface RotateWebhookSecretInput {
  /** How long deliveries stay signed with the old secret too: 0..604800, default 86400. */
  overlapSeconds?: number;
}

/** The new secret is shown only here: store it. */
export interface RotatedWebhookSecret {
  webhookId: string;
  secret: string;
  previousSecretExpiresAt: string;
}

export type SettlementStatus = "GENERATED" | "PENDING" | "acknowledged" | "disputed";

export interface SettlementFigures {
  /** The spins created that UTC day, voided ones included. */
  totalSpins: number;
  totalWageredUsd: number;
  totalPaidUsd: number;
  /** The voids made that UTC day, of spins of any day. */
  voidedSpins: number;
  voidedWageredUsd: number;
  voidedPaidUsd: number;
  /** The free-round spins created that UTC day (in totalSpins and totalPaidUsd) and their wagers, which the partner paid (not in totalWageredUsd). */
  freeRoundSpins: number;
  freeRoundWagerUsd: number;
  /** (totalWageredUsd − voidedWageredUsd) − (totalPaidUsd − voidedPaidUsd). */
  netUsd: number;
  /** totalPaidUsd ÷ totalWageredUsd; null when nothing was wagered. */
  rtp: number | null;
  /** Every amount above as an exact decimal string of USD, whatever its size (read these when figuresExact is false). */
  exact: SettlementExactAmounts;
  /**
   * False when an amount passes 2^53 − 1 micro-USD (about 9,007,199,254 USD): its number is then the nearest
   * double, not exact (a report's is false when any of its games' is).
   */
  figuresExact: boolean;
}

export interface SettlementExactAmounts {
  totalWageredUsd: string;
  totalPaidUsd: string;
  voidedWageredUsd: string;
  voidedPaidUsd: string;
  freeRoundWagerUsd: string;
  netUsd: string;
}

export interface VoidSpinInput {
  /** Why (1..500 characters): the partner's own record, e.g. its wallet's refusal. */
  reason: string;
}

export interface SettlementReport extends SettlementFigures {
  reportDate: string;
  status: SettlementStatus;
  /**
   * True while the figures may still change (computed before the UTC day ended): acknowledge and dispute answer
   * 409 KS-4305 until the first settlement run after the day ends makes the report final.
   */
  provisional: boolean;
  games: Array<SettlementFigures & { gameId: number }>;
  /** Spins player protection refused that day, by code (docs/jurisdictions.md). */
  refusedSpins: RefusedSpins;
  generatedAt: string;
  acknowledgedAt: string | null;
  disputedAt: string | null;
  disputeReason: string | null;
}

/**
 * The body of every webhook delivery, and an entry of the event log (`listEvents`, `events`); verify a
 * delivery's signature over the raw bytes before parsing it.
 */
export interface WebhookEvent<T = Record<string, unknown>> {
  id: string;
  /** Strictly increasing per partner and environment: where the event stands in the event log. */
  sequence: number;
  type: WebhookEventType;
  createdAt: string;
  environment: Environment;
  data: T;
}

export interface EventLogQuery {
  /** Events with a larger sequence (default 0: from the first). */
  after?: number;
  /** 1..1000 (default 100). */
  limit?: number;
  /** Only events of this type. */
  type?: WebhookEventType;
}

export interface EventLogPage {
  /** In ascending sequence. */
  events: WebhookEvent[];
  /** The last sequence returned, or `after` when none: the `after` of the next call. */
  nextAfter: number;
}
