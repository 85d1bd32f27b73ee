import { type FreeRoundRequests, freeRoundRequests } from "./free-rounds.js";
import {
  type BlockRequests,
  blockRequests,
  type GameRequests,
  gameRequests,
  type ParSheetRequests,
  parSheetRequests,
} from "./games.js";
import { type PlayerRequests, playerRequests } from "./players.js";
import { type ProtectionRequests, protectionRequests } from "./protection.js";
import { PARTNER_PREFIX, PartnerRequests, segment } from "./requests.js";
import { type SettlementRequests, settlementRequests } from "./settlements.js";
import { type FetchLike, type RetryPolicy, Transport } from "./transport.js";
import type {
  CreateReplayLinkInput,
  EventLogPage,
  EventLogQuery,
  PageInfo,
  PageRequest,
  Replay,
  ReplayLink,
  SpinInput,
  SpinProof,
  SpinResult,
  VerifiableSpin,
  VoidSpinInput,
  WebhookEvent,
} from "./types.js";
import { type WebhookRequests, webhookRequests } from "./webhooks.js";

export type { CreateOptions } from "./requests.js";

/** The package's version: `1.<release>.0`, the API document's `info.version` of the release it ships with. */
export const SDK_VERSION = "1.3.0";

export interface PartnerClientOptions {
  /** `ks_sandbox_…` or `kp_prod_…`; keep it on your server. */
  apiKey: string;
  /** The deployment's address, e.g. `https://outcomes.example.com` (the `/api/partner/v1` prefix is added). */
  baseUrl: string;
  /** Generate an `Idempotency-Key` for every spin that has none, so spins are retried safely too (creates always get one). */
  autoIdempotencyKeys?: boolean;
  retry?: Partial<RetryPolicy>;
  /** Per attempt (default 30 s). */
  timeoutMs?: number;
  /** Injectable for tests and custom agents (default: global fetch). */
  fetch?: FetchLike;
  /** Injectable for tests (default: setTimeout). */
  sleep?: (ms: number) => Promise<void>;
}

export interface SpinOptions {
  /**
   * Makes the spin safe to retry: the same key and body return the first result for 24 h. Without
   * one, a spin is retried only after an answer saying nothing was done (429, KS-4203, KS-5002,
   * KS-5004), never after KS-5001, KS-5003 or a lost answer (it might have happened).
   */
  idempotencyKey?: string;
}

/** The event log's largest page: catching up takes as few requests as possible. */
const EVENT_LOG_MAX_LIMIT = 1000;

/**
 * A typed client for every partner endpoint. Retries follow the error reference's rule
 * (docs/errors.md, "Retrying: the rule"; every deployment serves it at /docs/errors): 429 and the
 * codes saying nothing was done for any request, after `Retry-After` or an exponential backoff with
 * jitter; other 5xx and lost answers only for reads, deletes, voids, cancels and requests with an
 * `Idempotency-Key`; never another 4xx. Errors are `PartnerApiError` with the `KS-` code.
 *
 * Each resource group is a function of the requests in a file of its own (games.ts, webhooks.ts, …).
 */
export class PartnerClient {
  private readonly api: PartnerRequests;
  private readonly autoIdempotencyKeys: boolean;
  readonly games: GameRequests;
  /** A game's outcome blocks and their commitments (docs/fairness.md); check them with `verifyRevealedBlock`. */
  readonly blocks: BlockRequests;
  readonly parSheets: ParSheetRequests;
  readonly players: PlayerRequests;
  /** Free rounds (docs/free-rounds.md): spin one with `spin({ gameId, playerId, freeRoundsId })`. */
  readonly freeRounds: FreeRoundRequests;
  readonly webhooks: WebhookRequests;
  readonly settlements: SettlementRequests;
  /** Jurisdiction profiles and players' protection: `client.protection.set("player-42", {lossLimitUsd: {daily: 10}})`. */
  readonly protection: ProtectionRequests;

  constructor(options: PartnerClientOptions) {
    this.autoIdempotencyKeys = options.autoIdempotencyKeys ?? false;
    this.api = new PartnerRequests(
      new Transport({
        baseUrl: options.baseUrl,
        apiKey: options.apiKey,
        fetch: options.fetch ?? ((input, init) => globalThis.fetch(input, init)),
        sleep: options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms))),
        retry: { maxRetries: 3, baseDelayMs: 250, maxDelayMs: 8_000, maxRetryAfterMs: 60_000, ...options.retry },
        timeoutMs: options.timeoutMs ?? 30_000,
        userAgent: `outcomes-sdk-js/${SDK_VERSION}`,
      }),
    );
    this.games = gameRequests(this.api);
    this.blocks = blockRequests(this.api);
    this.parSheets = parSheetRequests(this.api);
    this.players = playerRequests(this.api);
    this.freeRounds = freeRoundRequests(this.api);
    this.webhooks = webhookRequests(this.api);
    this.settlements = settlementRequests(this.api);
    this.protection = protectionRequests(this.api);
  }

  /** Runs a spin. With an `Idempotency-Key` (given, or generated when `autoIdempotencyKeys` is on) it is retried safely. */
  spin(input: SpinInput, options: SpinOptions = {}): Promise<SpinResult> {
    const idempotencyKey =
      options.idempotencyKey ?? (this.autoIdempotencyKeys ? globalThis.crypto.randomUUID() : undefined);
    return this.api.send<SpinResult>({
      method: "POST",
      path: `${PARTNER_PREFIX}/spins`,
      body: input,
      headers: idempotencyKey ? { "Idempotency-Key": idempotencyKey } : undefined,
      safety: idempotencyKey === undefined ? "unsafe" : "idempotent",
    });
  }

  /** One page of the event log: the events after `after`, in ascending sequence, and where to read on. */
  listEvents(query: EventLogQuery = {}): Promise<EventLogPage> {
    return this.api.get<EventLogPage>("/events", { after: query.after, limit: query.limit, type: query.type });
  }

  /**
   * Every event after `after`, in ascending sequence, following `nextAfter` page by page; it ends
   * once caught up. Remember the last `sequence` you handled and pass it as `after` next time: each
   * event comes exactly once, also those whose transactions committed late.
   */
  async *events(options: Omit<EventLogQuery, "limit"> = {}): AsyncGenerator<WebhookEvent> {
    let after = options.after ?? 0;
    for (;;) {
      const page = await this.listEvents({ after, limit: EVENT_LOG_MAX_LIMIT, type: options.type });
      yield* page.events;
      if (page.events.length < EVENT_LOG_MAX_LIMIT) return;
      after = page.nextAfter;
    }
  }

  /**
   * A spin as it was first answered, with its void if it was voided (game recall). With
   * `include: "proof"` also its proof and block: `verifySpinProof(spin, spin.proof, spin.block)`.
   */
  getSpin(spinId: string, options: { include?: "proof" } = {}): Promise<VerifiableSpin> {
    return this.api.get<VerifiableSpin>(`/spins/${segment(spinId)}`, { include: options.include });
  }

  /**
   * A replay link of the spin: a page anyone can open (a player, support, a regulator; no API key)
   * with the spin as played and its proof checked by the browser; `${url}.json` is its data. The
   * link lasts `expiresInHours` (1..2160, default 168). Making one changes nothing, so it is retried.
   */
  createReplayLink(spinId: string, input: CreateReplayLinkInput = {}): Promise<ReplayLink> {
    return this.api.repeatable<ReplayLink>(`/spins/${segment(spinId)}/replay-link`, input);
  }

  /**
   * Voids a spin your own step after it failed for (its wallet debit refused, the session closed),
   * within the deployment's void window (72 hours by default): the player's balance and totals are
   * reversed and the day's settlement counts the void; the outcome stays used. Safe to retry: a spin
   * already voided answers its first void and changes nothing. 409 KS-4217 once it is too late.
   */
  voidSpin(spinId: string, input: VoidSpinInput): Promise<SpinResult> {
    return this.api.repeatable<SpinResult>(`/spins/${segment(spinId)}/void`, input);
  }

  /**
   * A replay link's data (what its page shows, with the proof and block), by the link's URL or token.
   * It needs no key: a player's browser can fetch `${url}.json` itself (it answers any origin).
   */
  getReplay(urlOrToken: string): Promise<Replay> {
    const token = urlOrToken.slice(urlOrToken.lastIndexOf("/") + 1);
    return this.api.send<Replay>({
      method: "GET",
      path: `/replay/${segment(token)}.json`,
      safety: "idempotent",
    });
  }

  /** The RFC 9162 inclusion proof of a spin's outcome in its block; check it with `verifySpinProof`. */
  spinProof(spinId: string): Promise<SpinProof> {
    return this.api.get<SpinProof>(`/spins/${segment(spinId)}/proof`);
  }

  /** Every item of a list endpoint, page after page: `for await (const game of client.all((p) => client.games.list(p), "games"))`. */
  async *all<K extends string, T>(
    list: (page: PageRequest) => Promise<Record<K, T[]> & PageInfo>,
    key: K,
    limit = 100,
  ): AsyncGenerator<T> {
    for (let page = 1; ; page++) {
      const answer = await list({ page, limit });
      const items = answer[key];
      yield* items;
      if (items.length < limit || page * limit >= answer.total) return;
    }
  }
}
