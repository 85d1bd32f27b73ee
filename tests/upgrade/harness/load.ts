import { randomInt, randomUUID } from "node:crypto";
import { isDeepStrictEqual } from "node:util";
import { usdToMicros } from "@outcomes/core";
import type { World } from "../../faults/harness/http.js";
import { sleep } from "../../faults/harness/processes.js";
import type { BalancedAnswer, Balancer } from "./balancer.js";
import type { ApiInstance } from "./deployment.js";

const WAGERS_USD = [0.25, 1, 1.5, 2.37, 5];
/** The sample sheet's top tier (×1000): with any wager of 1 USD or more, a large win (1,000 USD). */
const LARGE_WIN_TIER = "T6";

export interface SpinRecord {
  playerId: string;
  wagerUsd: number;
  idempotencyKey?: string;
  forceTier?: string;
  sentAt: number;
  answeredAt?: number;
  /** HTTP status; "network" (connection failed, not refused everywhere) or "timeout" (no answer in time). */
  status: number | "network" | "timeout";
  networkError?: string;
  code?: string;
  retryAfter?: string;
  /** The release whose API process answered. */
  servedBy?: string;
  /** The spin result (200). */
  result?: any;
  /** Sends the balancer made before the answer (see Balancer). */
  resent?: { refused: number; reset: number };
  /** A keyed request that got no 200, sent again after the load: what its retry answered. */
  retried?: { result: any; servedBy: string; replayed: boolean };
}

export interface LoadOptions {
  clients: number;
  /** Every n-th client sends a fresh `Idempotency-Key` with each spin (2: half of them). */
  keyedEvery: number;
  /** Every n-th spin of a client is forced to the top tier (sandbox `forceTier`): a large win. */
  forceEvery: number;
  /** A request not answered within this counts as hung. */
  timeoutMs: number;
}

/** A replay that did not give back the first answer: which request, where, and what came back. */
export interface ReplayMismatch {
  idempotencyKey: string;
  firstServedBy: string;
  replayServedBy: string;
  status: number | string;
  replayedHeader: string | undefined;
  sameBody: boolean;
}

export interface ReplayReport {
  replayed: number;
  /** Replays answered by the other release than the first answer: "old→new" → count. */
  across: Record<string, number>;
  mismatches: ReplayMismatch[];
}

/**
 * Closed-loop spin clients behind the balancer (each player is one client's, so its answers chain);
 * every request, its answer and the release that gave it is recorded.
 */
export class RollingLoad {
  readonly records: SpinRecord[] = [];
  /** Keyed requests already replayed by the release that did not first answer them. */
  private readonly replayedAcross = new Set<SpinRecord>();
  private running = false;
  private loops: Promise<void>[] = [];

  constructor(
    private readonly balancer: Balancer,
    private readonly world: World,
    private readonly options: LoadOptions,
  ) {}

  start(): void {
    this.running = true;
    const tag = randomUUID().slice(0, 6);
    this.loops = Array.from({ length: this.options.clients }, (_, client) => this.loop(client, tag));
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
  }

  private async loop(client: number, tag: string): Promise<void> {
    const keyed = client % this.options.keyedEvery === 0;
    for (let n = 0; this.running; n++) {
      const forced = n % this.options.forceEvery === this.options.forceEvery - 1;
      const record: SpinRecord = {
        playerId: `${tag}-c${client}-p${n % 3}`,
        wagerUsd: forced ? 1 + randomInt(4) : WAGERS_USD[randomInt(WAGERS_USD.length)]!,
        idempotencyKey: keyed ? `${tag}-c${client}-${n}` : undefined,
        forceTier: forced ? LARGE_WIN_TIER : undefined,
        sentAt: Date.now(),
        status: "network",
      };
      this.records.push(record);
      try {
        const answer = await this.spin(record);
        record.status = answer.status;
        record.servedBy = answer.servedBy;
        if (answer.resent.refused + answer.resent.reset > 0) record.resent = answer.resent;
        record.code = answer.body?.errorCode;
        record.retryAfter = header(answer, "retry-after");
        if (answer.status === 200) record.result = answer.body;
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === "TIMEOUT") record.status = "timeout";
        else record.networkError = code ?? (error as Error).message;
      }
      record.answeredAt = Date.now();
      if (record.status !== 200) await sleep(100);
    }
  }

  /** The record's request (same body and key) through the balancer, or to one API process. */
  spin(record: SpinRecord, to?: ApiInstance): Promise<BalancedAnswer> {
    return this.balancer.send(
      {
        method: "POST",
        path: "/api/partner/v1/spins",
        headers: {
          "x-api-key": this.world.apiKey,
          ...(record.idempotencyKey ? { "idempotency-key": record.idempotencyKey } : {}),
        },
        json: {
          gameId: this.world.gameId,
          playerId: record.playerId,
          wagerUsd: record.wagerUsd,
          ...(record.forceTier ? { forceTier: record.forceTier } : {}),
        },
        timeoutMs: this.options.timeoutMs,
      },
      to,
    );
  }

  /**
   * A partner's retries after the load: every keyed request that got no 200 is sent again with its
   * key until it answers 200 (a replay if its first attempt had committed after all), for at most
   * `timeoutMs` in all; those still without a 200 then are `unsettled`.
   */
  async settleKeyed(timeoutMs = 10_000): Promise<{ retried: number; replayed: number; unsettled: number }> {
    const pending = this.records.filter((record) => record.idempotencyKey && record.status !== 200 && !record.retried);
    const deadline = Date.now() + timeoutMs;
    for (const record of pending) {
      while (Date.now() < deadline) {
        const answer = await this.spin(record).catch(() => undefined);
        if (answer?.status === 200) {
          const replayed = header(answer, "idempotent-replayed") === "true";
          record.retried = { result: answer.body, servedBy: answer.servedBy, replayed };
          break;
        }
        await sleep(100);
      }
    }
    return {
      retried: pending.length,
      replayed: pending.filter((record) => record.retried?.replayed).length,
      unsettled: pending.filter((record) => !record.retried).length,
    };
  }

  /**
   * Sends every keyed request that got its 200 again, `concurrency` at a time, to `to` (or through
   * the balancer): each must replay (`Idempotent-Replayed: true`) with exactly the first answer,
   * whichever release gave that.
   */
  async replayKeyed(records: SpinRecord[], to?: ApiInstance, concurrency = 32): Promise<ReplayReport> {
    const report: ReplayReport = { replayed: 0, across: {}, mismatches: [] };
    const queue = records.filter((record) => record.idempotencyKey && firstResult(record));
    const replayer = async () => {
      for (let record = queue.shift(); record; record = queue.shift()) {
        const first = firstResult(record)!;
        const answer = await this.spin(record, to).catch((error: NodeJS.ErrnoException) => error);
        const status = answer instanceof Error ? (answer.code ?? answer.message) : answer.status;
        const replayedHeader = answer instanceof Error ? undefined : header(answer, "idempotent-replayed");
        const sameBody = !(answer instanceof Error) && isDeepStrictEqual(answer.body, first.result);
        const replayServedBy = answer instanceof Error ? (to?.release.label ?? "?") : answer.servedBy;
        if (status === 200 && replayedHeader === "true" && sameBody) {
          report.replayed++;
          if (replayServedBy !== first.servedBy) this.replayedAcross.add(record);
          const route = `${first.servedBy}→${replayServedBy}`;
          report.across[route] = (report.across[route] ?? 0) + 1;
        } else {
          report.mismatches.push({
            idempotencyKey: record.idempotencyKey!,
            firstServedBy: first.servedBy,
            replayServedBy,
            status,
            replayedHeader,
            sameBody,
          });
        }
      }
    };
    await Promise.all(Array.from({ length: concurrency }, replayer));
    return report;
  }

  /**
   * Keyed requests whose first 200 came from `release`; with `notYetAcross`, only those no other
   * release has replayed yet.
   */
  keyedAnsweredBy(release: string, notYetAcross = false): SpinRecord[] {
    return this.records.filter(
      (record) =>
        record.idempotencyKey &&
        firstResult(record)?.servedBy === release &&
        !(notYetAcross && this.replayedAcross.has(record)),
    );
  }

  /** spinId → what the client asked, for every spin a client saw succeed (directly or on retry). */
  accepted(): Map<string, { playerId: string; wagerMicros: number }> {
    const accepted = new Map<string, { playerId: string; wagerMicros: number }>();
    for (const record of this.records) {
      const spinId = firstResult(record)?.result.spinId;
      if (spinId) accepted.set(spinId, { playerId: record.playerId, wagerMicros: usdToMicros(record.wagerUsd)! });
    }
    return accepted;
  }

  /** Every spin result a client saw, with the release that gave it. */
  results(): { result: any; servedBy: string }[] {
    return this.records.flatMap((record) => {
      const first = firstResult(record);
      return first ? [first] : [];
    });
  }

  /** Requests the balancer sent on after a refusal or a stopping process's reset. */
  resends(): { refused: number; reset: number } {
    const total = { refused: 0, reset: 0 };
    for (const record of this.records) {
      total.refused += record.resent?.refused ?? 0;
      total.reset += record.resent?.reset ?? 0;
    }
    return total;
  }

  /** Answer counts, e.g. {"200 old": 950, "503 KS-4203 new": 3, "network ECONNRESET": 1}. */
  summary(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const record of this.records) {
      const label =
        typeof record.status === "number"
          ? [record.status, record.code, record.servedBy].filter(Boolean).join(" ")
          : [record.status, record.networkError].filter(Boolean).join(" ");
      counts[label] = (counts[label] ?? 0) + 1;
    }
    return counts;
  }
}

/** The first 200 a client saw for the record: its own answer, or its retry's. */
function firstResult(record: SpinRecord): { result: any; servedBy: string } | undefined {
  if (record.status === 200) return { result: record.result, servedBy: record.servedBy! };
  return record.retried;
}

function header(answer: BalancedAnswer, name: string): string | undefined {
  const value = answer.headers[name];
  return Array.isArray(value) ? value[0] : value;
}
