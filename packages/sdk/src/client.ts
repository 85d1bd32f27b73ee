import { protectionMethods } from "./protection.js";
import { type FetchLike, type RetryPolicy, Transport } from "./transport.js";
import type {
  Block,
  CreatedWebhook,
  CreateReplayLinkInput,
  Delivery,
  EventLogPage,
  EventLogQuery,
  FreeRoundGrant,
  FreeRoundPlayer,
  Game,
  GrantFreeRoundsInput,
  ListedSpin,
  PageInfo,
  PageRequest,
  ParSheet,
  ParSheetDocument,
  ParSheetWithDocument,
  Player,
  PlayerSpinsQuery,
  RecoverWebhookInput,
  RegisterGameInput,
  RegisterWebhookInput,
  Replay,
  ReplayLink,
  RevealedEntries,
  RevealedEntriesPage,
  RevealedEntry,
  RotatedWebhookSecret,
  RotateWebhookSecretInput,
  SettlementReport,
  SpinInput,
  SpinProof,
  SpinResult,
  UpdateGameInput,
  UpdateWebhookInput,
  VerifiableSpin,
  VoidSpinInput,
  Webhook,
  WebhookEvent,
  WebhookRecovery,
} from "./types.js";

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

/** A create's key (same key and body within 24 h: the first result); your own keeps it safe across your restarts. */
export interface CreateOptions {
  idempotencyKey?: string;
}

const PREFIX = "/api/partner/v1";
/** The event log's largest page: catching up takes as few requests as possible. */
const EVENT_LOG_MAX_LIMIT = 1000;
/** The largest page of a revealed block's entries: a block takes as few requests as possible. */
const ENTRIES_MAX_LIMIT = 1000;
const segment = (value: string | number) => encodeURIComponent(String(value));
const pageQuery = (page: PageRequest = {}) => ({ page: page.page, limit: page.limit });

/**
 * A typed client for every partner endpoint. Retries follow the error reference's rule
 * (docs/errors.md, "Retrying: the rule"; every deployment serves it at /docs/errors): 429 and the
 * codes saying nothing was done for any request, after `Retry-After` or an exponential backoff with
 * jitter; other 5xx and lost answers only for reads, deletes, voids, cancels and requests with an
 * `Idempotency-Key`; never another 4xx. Errors are `PartnerApiError` with the `KS-` code.
 */
export class PartnerClient {
  private readonly transport: Transport;
  private readonly autoIdempotencyKeys: boolean;

  constructor(options: PartnerClientOptions) {
    this.autoIdempotencyKeys = options.autoIdempotencyKeys ?? false;
    this.transport = new Transport({
      baseUrl: options.baseUrl,
      apiKey: options.apiKey,
      fetch: options.fetch ?? ((input, init) => globalThis.fetch(input, init)),
      sleep: options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms))),
      retry: { maxRetries: 3, baseDelayMs: 250, maxDelayMs: 8_000, maxRetryAfterMs: 60_000, ...options.retry },
      timeoutMs: options.timeoutMs ?? 30_000,
      userAgent: `outcomes-sdk-js/${SDK_VERSION}`,
    });
  }

  /** A create (game, sheet, grant, webhook), always keyed (given, or generated for the call): its retries make no second one. */
  private create<T>(path: string, body: unknown, options: CreateOptions) {
    const headers = { "Idempotency-Key": options.idempotencyKey ?? globalThis.crypto.randomUUID() };
    return this.transport.request<T>({ method: "POST", path: PREFIX + path, body, headers, safety: "idempotent" });
  }

  private get<T>(path: string, query?: Record<string, string | number | undefined>) {
    return this.transport.request<T>({ method: "GET", path: PREFIX + path, query, safety: "idempotent" });
  }

  /** Writes the service does not de-duplicate: a 5xx is only retried when its code says nothing was done. */
  private write<T>(method: "POST" | "PATCH" | "DELETE", path: string, body?: unknown) {
    const safety = method === "DELETE" ? "idempotent" : "write";
    return this.transport.request<T>({ method, path: PREFIX + path, body, safety });
  }

  /** Jurisdiction profiles and players' protection: `client.protection.set("player-42", {lossLimitUsd: {daily: 10}})`. */
  readonly protection = protectionMethods((spec) => this.transport.request(spec), PREFIX);

  readonly games = {
    list: (page?: PageRequest) => this.get<{ games: Game[] } & PageInfo>("/games", pageQuery(page)),
    get: (gameId: number) => this.get<Game>(`/games/${segment(gameId)}`),
    register: (input: RegisterGameInput, options: CreateOptions = {}) => this.create<Game>("/games", input, options),
    update: (gameId: number, input: UpdateGameInput) => this.write<Game>("PATCH", `/games/${segment(gameId)}`, input),
  };

  /** A game's outcome blocks and their commitments (docs/fairness.md); check them with `verifyRevealedBlock`. */
  readonly blocks = {
    list: (gameId: number, page?: PageRequest) =>
      this.get<{ blocks: Block[] } & PageInfo>(`/games/${segment(gameId)}/blocks`, pageQuery(page)),
    get: (gameId: number, blockId: number) => this.get<Block>(`/games/${segment(gameId)}/blocks/${segment(blockId)}`),
    /**
     * Every entry of a revealed block in index order, fetched page after page (1,000 a page), ready
     * for `verifyRevealedBlock`. 409 KS-4216 until the block (finite_pool: its cycle) is exhausted
     * and its seed revealed.
     */
    entries: async (gameId: number, blockId: number): Promise<RevealedEntries> => {
      const entries: RevealedEntry[] = [];
      for (let page = 1; ; page++) {
        const answer = await this.blocks.entriesPage(gameId, blockId, { page, limit: ENTRIES_MAX_LIMIT });
        for (const entry of answer.entries) entries.push(entry);
        if (answer.entries.length < ENTRIES_MAX_LIMIT || entries.length >= answer.total) {
          return { blockId: answer.blockId, seed: answer.seed, entries };
        }
      }
    },
    /** One page of a revealed block's entries: `limit` 1..1000 (default 1000), `total` the block's size. */
    entriesPage: (gameId: number, blockId: number, page?: PageRequest) =>
      this.get<RevealedEntriesPage>(`/games/${segment(gameId)}/blocks/${segment(blockId)}/entries`, pageQuery(page)),
  };

  readonly parSheets = {
    upload: (document: ParSheetDocument, options: CreateOptions = {}) =>
      this.create<ParSheet>("/par-sheets", document, options),
    list: (page?: PageRequest) => this.get<{ parSheets: ParSheet[] } & PageInfo>("/par-sheets", pageQuery(page)),
    get: (parSheetId: string) => this.get<ParSheetWithDocument>(`/par-sheets/${segment(parSheetId)}`),
  };

  readonly players = {
    get: (playerId: string) => this.get<Player>(`/players/${segment(playerId)}`),
    /**
     * A page of the player's spins, newest first (the last game and the nine before it: `{ limit: 10 }`).
     * `include: "proof"` adds each spin's proof and block (`verifySpinProof(spin, spin.proof, spin.block)`),
     * `replayLinks: true` a `replayUrl`; one request either way.
     */
    spins: (playerId: string, query: PlayerSpinsQuery = {}) =>
      this.get<{ spins: ListedSpin[] } & PageInfo>(`/players/${segment(playerId)}/spins`, {
        ...pageQuery(query),
        include: query.include,
        replayLinks: query.replayLinks ? "true" : undefined,
      }),
  };

  /** Free rounds (docs/free-rounds.md): spin one with `spin({ gameId, playerId, freeRoundsId })`. */
  readonly freeRounds = {
    /** Retried safely with its `Idempotency-Key` (given, or generated): one grant, whatever the retries. */
    grant: (input: GrantFreeRoundsInput, options: CreateOptions = {}) => {
      const expiresAt = input.expiresAt instanceof Date ? input.expiresAt.toISOString() : input.expiresAt;
      return this.create<FreeRoundGrant>("/free-rounds", { ...input, expiresAt }, options);
    },
    list: (page?: PageRequest) =>
      this.get<{ freeRounds: FreeRoundGrant[] } & PageInfo>("/free-rounds", pageQuery(page)),
    get: (freeRoundsId: string) => this.get<FreeRoundGrant>(`/free-rounds/${segment(freeRoundsId)}`),
    /** 404 KS-4204 when the player is not in the grant. */
    player: (freeRoundsId: string, playerId: string) =>
      this.get<FreeRoundPlayer>(`/free-rounds/${segment(freeRoundsId)}/players/${segment(playerId)}`),
    /** No round of the grant can be spun any more. Safe to retry: a cancelled grant answers its first cancel. */
    cancel: (freeRoundsId: string) =>
      this.transport.request<FreeRoundGrant>({
        method: "POST",
        path: `${PREFIX}/free-rounds/${segment(freeRoundsId)}/cancel`,
        safety: "idempotent",
      }),
  };

  readonly webhooks = {
    /** The answer holds the signing `secret`, shown only here. */
    register: (input: RegisterWebhookInput, options: CreateOptions = {}) =>
      this.create<CreatedWebhook>("/webhooks", input, options),
    /** Changes `rateLimitPerSecond` (null: no pacing). Available once release 3's rollout finished. */
    update: (webhookId: string, input: UpdateWebhookInput) =>
      this.write<Webhook>("PATCH", `/webhooks/${segment(webhookId)}`, input),
    /**
     * Turns a webhook the service disabled (failing too long, or a 410 Gone) back on; `recover` then
     * delivers what it missed. An enabled one is answered as it is.
     */
    enable: (webhookId: string) => this.write<Webhook>("POST", `/webhooks/${segment(webhookId)}/enable`),
    list: (page?: PageRequest) => this.get<{ webhooks: Webhook[] } & PageInfo>("/webhooks", pageQuery(page)),
    /** Soft delete; repeating it is harmless. */
    delete: (webhookId: string) => this.write<Webhook>("DELETE", `/webhooks/${segment(webhookId)}`),
    deliveries: (webhookId: string, page?: PageRequest) =>
      this.get<{ deliveries: Delivery[] } & PageInfo>(`/webhooks/${segment(webhookId)}/deliveries`, pageQuery(page)),
    /** A new delivery (new id) of the same event, same body. */
    redeliver: (webhookId: string, deliveryId: string) =>
      this.write<Delivery>("POST", `/webhooks/${segment(webhookId)}/deliveries/${segment(deliveryId)}/redeliver`),
    /**
     * After an outage: delivers again each event whose delivery failed since `since` (at most 30
     * days back), once; calling it again sends nothing twice. Answers at once with the count; the
     * service then makes the new deliveries in the background (a large backlog takes a while).
     */
    recover: (webhookId: string, input: RecoverWebhookInput) =>
      this.write<WebhookRecovery>("POST", `/webhooks/${segment(webhookId)}/recover`, {
        since: input.since instanceof Date ? input.since.toISOString() : input.since,
      }),
    /**
     * A new signing secret, shown only here. Until `previousSecretExpiresAt` deliveries carry a
     * signature with each; verify with `[secret, oldSecret]` meanwhile.
     */
    rotateSecret: (webhookId: string, input: RotateWebhookSecretInput = {}) =>
      this.write<RotatedWebhookSecret>("POST", `/webhooks/${segment(webhookId)}/rotate-secret`, input),
  };

  readonly settlements = {
    list: (page?: PageRequest) => this.get<{ reports: SettlementReport[] } & PageInfo>("/settlements", pageQuery(page)),
    get: (reportDate: string) => this.get<SettlementReport>(`/settlements/${segment(reportDate)}`),
    /** A final report only: a provisional one (its UTC day not ended, or not yet made final) is 409 KS-4305. */
    acknowledge: (reportDate: string) =>
      this.write<SettlementReport>("POST", `/settlements/${segment(reportDate)}/acknowledge`),
    /** A final report only, as `acknowledge`. */
    dispute: (reportDate: string, reason: string) =>
      this.write<SettlementReport>("POST", `/settlements/${segment(reportDate)}/dispute`, { reason }),
  };

  /** Runs a spin. With an `Idempotency-Key` (given, or generated when `autoIdempotencyKeys` is on) it is retried safely. */
  spin(input: SpinInput, options: SpinOptions = {}): Promise<SpinResult> {
    const idempotencyKey =
      options.idempotencyKey ?? (this.autoIdempotencyKeys ? globalThis.crypto.randomUUID() : undefined);
    return this.transport.request<SpinResult>({
      method: "POST",
      path: `${PREFIX}/spins`,
      body: input,
      headers: idempotencyKey ? { "Idempotency-Key": idempotencyKey } : undefined,
      safety: idempotencyKey === undefined ? "unsafe" : "idempotent",
    });
  }

  /** One page of the event log: the events after `after`, in ascending sequence, and where to read on. */
  listEvents(query: EventLogQuery = {}): Promise<EventLogPage> {
    return this.get<EventLogPage>("/events", { after: query.after, limit: query.limit, type: query.type });
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
    return this.get<VerifiableSpin>(`/spins/${segment(spinId)}`, { include: options.include });
  }

  /**
   * A replay link of the spin: a page anyone can open (a player, support, a regulator; no API key)
   * with the spin as played and its proof checked by the browser; `${url}.json` is its data. The
   * link lasts `expiresInHours` (1..2160, default 168). Making one changes nothing, so it is retried.
   */
  createReplayLink(spinId: string, input: CreateReplayLinkInput = {}): Promise<ReplayLink> {
    return this.transport.request<ReplayLink>({
      method: "POST",
      path: `${PREFIX}/spins/${segment(spinId)}/replay-link`,
      body: input,
      safety: "idempotent",
    });
  }

  /**
   * Voids a spin your own step after it failed for (its wallet debit refused, the session closed),
   * within the deployment's void window (72 hours by default): the player's balance and totals are
   * reversed and the day's settlement counts the void; the outcome stays used. Safe to retry: a spin
   * already voided answers its first void and changes nothing. 409 KS-4217 once it is too late.
   */
  voidSpin(spinId: string, input: VoidSpinInput): Promise<SpinResult> {
    return this.transport.request<SpinResult>({
      method: "POST",
      path: `${PREFIX}/spins/${segment(spinId)}/void`,
      body: input,
      safety: "idempotent",
    });
  }

  /**
   * A replay link's data (what its page shows, with the proof and block), by the link's URL or token.
   * It needs no key: a player's browser can fetch `${url}.json` itself (it answers any origin).
   */
  getReplay(urlOrToken: string): Promise<Replay> {
    const token = urlOrToken.slice(urlOrToken.lastIndexOf("/") + 1);
    return this.transport.request<Replay>({
      method: "GET",
      path: `/replay/${segment(token)}.json`,
      safety: "idempotent",
    });
  }

  /** The RFC 9162 inclusion proof of a spin's outcome in its block; check it with `verifySpinProof`. */
  spinProof(spinId: string): Promise<SpinProof> {
    return this.get<SpinProof>(`/spins/${segment(spinId)}/proof`);
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
