import { randomInt, randomUUID } from "node:crypto";
import { usdToMicros } from "@outcomes/core";
import type { ApiClient, World } from "./http.js";
import { eventually, sleep } from "./processes.js";

const WAGERS_USD = [0.25, 1, 1.5, 2.37, 5];

export interface SpinRecord {
  playerId: string;
  wagerUsd: number;
  idempotencyKey?: string;
  sentAt: number;
  /** When the answer (or the failure) came. */
  answeredAt?: number;
  /**
   * HTTP status; "network" when the connection failed (process killed, connection refused or
   * reset); "timeout" when no answer came within the client's bound (a hung server).
   */
  status: number | "network" | "timeout";
  /** For "network": the socket error's code, e.g. ECONNREFUSED. */
  networkError?: string;
  code?: string;
  spinId?: string;
  retryAfter?: string | null;
  /** Set when a failed keyed request was retried after the fault: what the retry answered. */
  retried?: { spinId: string; replayed: boolean };
}

export interface LoadOptions {
  clients: number;
  /** Distinct players per client (a player is only ever used by one client, so answers chain). */
  playersPerClient?: number;
  /** Every n-th client sends `Idempotency-Key` on every spin (0: none). */
  keyedEvery?: number;
  /** Pause after an error answer, so a down service is not hammered in a tight loop. */
  errorPauseMs?: number;
  /** How long a client waits for an answer before it counts the request as timed out (default 8 s). */
  timeoutMs?: number;
}

/** What one phase of a fault test saw: its answers, its slowest one, and how soon spins were 200 again. */
export interface PhaseFigures {
  requests: number;
  answers: Record<string, number>;
  maxLatencyMs: number;
  /** From the fault to the first 200 answered to a request sent after it (null: none). */
  firstOkMs: number | null;
}

/** Closed-loop spin clients over real HTTP; every request and answer is recorded. */
export class SpinLoad {
  readonly records: SpinRecord[] = [];
  private running = false;
  private loops: Promise<void>[] = [];

  constructor(
    private readonly api: ApiClient,
    private readonly world: World,
    private readonly options: LoadOptions,
  ) {}

  start(): this {
    this.running = true;
    const tag = randomUUID().slice(0, 6);
    this.loops = Array.from({ length: this.options.clients }, (_, client) => this.loop(client, tag));
    return this;
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
  }

  private async loop(client: number, tag: string): Promise<void> {
    const keyed = (this.options.keyedEvery ?? 0) > 0 && client % (this.options.keyedEvery ?? 1) === 0;
    const players = this.options.playersPerClient ?? 3;
    for (let n = 0; this.running; n++) {
      const record: SpinRecord = {
        playerId: `${tag}-c${client}-p${n % players}`,
        wagerUsd: WAGERS_USD[randomInt(WAGERS_USD.length)]!,
        idempotencyKey: keyed ? `${tag}-c${client}-${n}` : undefined,
        sentAt: Date.now(),
        status: "network",
      };
      this.records.push(record);
      try {
        const answer = await this.spin(record);
        record.status = answer.status;
        record.code = answer.body?.errorCode;
        record.spinId = answer.status === 200 ? answer.body.spinId : undefined;
        record.retryAfter = answer.headers.get("retry-after");
      } catch (error) {
        if ((error as Error).name === "TimeoutError") record.status = "timeout";
        else record.networkError = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).name;
      }
      record.answeredAt = Date.now();
      if (record.status !== 200) await sleep(this.options.errorPauseMs ?? 50);
    }
  }

  /** Sends the record's request again (same key and body): what a partner's retry does. */
  spin(record: SpinRecord) {
    return this.api.call("POST", "/api/partner/v1/spins", {
      apiKey: this.world.apiKey,
      json: { gameId: this.world.gameId, playerId: record.playerId, wagerUsd: record.wagerUsd },
      headers: record.idempotencyKey ? { "idempotency-key": record.idempotencyKey } : {},
      timeoutMs: this.options.timeoutMs ?? 8_000,
      retryIdleReset: false,
    });
  }

  /**
   * After the fault: re-sends every keyed request that got no 200 with its key, until it answers
   * 200. A replay means the first attempt had committed although its caller saw a failure.
   * `concurrency` retries that many keys at once (each key is its own request).
   */
  async settleKeyed(timeoutMs = 20_000, concurrency = 1): Promise<{ retried: number; replayed: number }> {
    const deadline = Date.now() + timeoutMs;
    const pending = this.records.filter((record) => record.idempotencyKey && record.status !== 200);
    const queue = [...pending];
    const retrier = async () => {
      for (let record = queue.shift(); record; record = queue.shift()) await settle(record);
    };
    const settle = async (record: SpinRecord) => {
      for (;;) {
        const answer = await this.spin(record).catch(() => undefined);
        if (answer?.status === 200) {
          record.retried = {
            spinId: answer.body.spinId,
            replayed: answer.headers.get("idempotent-replayed") === "true",
          };
          break;
        }
        if (Date.now() > deadline) throw new Error(`keyed retry never succeeded: ${JSON.stringify(answer?.body)}`);
        await sleep(100);
      }
    };
    await Promise.all(Array.from({ length: concurrency }, retrier));
    return { retried: pending.length, replayed: pending.filter((record) => record.retried?.replayed).length };
  }

  /** spinId → what the client asked, for every spin a client saw succeed (directly or on retry). */
  accepted(): Map<string, { playerId: string; wagerMicros: number }> {
    const accepted = new Map<string, { playerId: string; wagerMicros: number }>();
    for (const record of this.records) {
      const spinId = record.spinId ?? record.retried?.spinId;
      if (spinId) accepted.set(spinId, { playerId: record.playerId, wagerMicros: usdToMicros(record.wagerUsd)! });
    }
    return accepted;
  }

  /** Requests whose fate the client could not know: no answer, or a 5xx, without a key to retry with. */
  unresolved(): number {
    return this.records.filter(
      (record) => !record.idempotencyKey && (typeof record.status === "string" || record.status >= 500),
    ).length;
  }

  /** Waits for a 200 to a request sent after `since`; returns how long after `since` it was answered. */
  async recovered(since: number, timeoutMs = 20_000): Promise<number> {
    await eventually(() => this.firstOk(since) !== null, timeoutMs, "a 200 spin after recovery");
    return this.firstOk(since)!;
  }

  private firstOk(since: number): number | null {
    let first: number | null = null;
    for (const record of this.records) {
      if (record.sentAt < since || record.status !== 200) continue;
      const after = record.answeredAt! - since;
      if (first === null || after < first) first = after;
    }
    return first;
  }

  /**
   * Figures of the requests answered (or failed) in [from, to), the fault having struck at `faultAt`:
   * a request in flight when a fault strikes counts in the fault's phase.
   */
  figures(from: number, to: number, faultAt = from): PhaseFigures {
    const records = this.answeredBetween(from, to);
    return {
      requests: records.length,
      answers: this.summary(records),
      maxLatencyMs: records.reduce(
        (max, record) => Math.max(max, (record.answeredAt ?? Date.now()) - record.sentAt),
        0,
      ),
      firstOkMs: this.firstOk(faultAt),
    };
  }

  /** Answer counts by status and code, e.g. {"200": 950, "500 KS-5003": 12, "network": 4}. */
  summary(records = this.records): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const record of records) {
      const label =
        record.status === "network"
          ? `network ${record.networkError}`
          : `${record.status}${record.code ? ` ${record.code}` : ""}`;
      counts[label] = (counts[label] ?? 0) + 1;
    }
    return counts;
  }

  between(from: number, to: number): SpinRecord[] {
    return this.records.filter((record) => record.sentAt >= from && record.sentAt < to);
  }

  answeredBetween(from: number, to: number): SpinRecord[] {
    return this.records.filter((record) => record.answeredAt! >= from && record.answeredAt! < to);
  }
}

/**
 * Answers that are not a clean failure while Redis is away or flushed (CONTRACT.md, spins): anything
 * but a 200, a 500 KS-5003, or a 503 that says when to come back (KS-4203 on an emptied queue).
 */
export function uncleanWhileRedisFails(records: SpinRecord[]): SpinRecord[] {
  return records.filter((record) => {
    if (record.status === 200) return false;
    if (record.status === 500 && record.code === "KS-5003") return false;
    return !(record.status === 503 && record.retryAfter);
  });
}
