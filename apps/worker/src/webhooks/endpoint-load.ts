import type { Logger } from "@outcomes/runtime";

export interface EndpointLoadOptions {
  /** An endpoint whose answers take this long on average, and four times as long as others', is slow. */
  slowSendMs: number;
  /** A slow endpoint's sends at once in this process; its other deliveries wait their turn. */
  slowInFlight: number;
  /** WEBHOOK_TIMEOUT_MS: a send that took this long got no answer, and its endpoint is slow at once. */
  timeoutMs: number;
}

/** One endpoint's sends here. */
class Endpoint {
  /** Sends claimed and not yet answered. */
  inFlight = 0;
  /** Claims a running statement may still make (its room, reserved). */
  reserved = 0;
  /** Moving average of its answers' durations (ms); NaN before the first. */
  averageMs = Number.NaN;
  slow = false;
}

/** Weight of the newest answer in an average: about the last ten answers count. */
const WEIGHT = 0.2;
/** How many times the typical answer time an endpoint's average must be to count as slow. */
const SLOWER = 4;
const average = (current: number, sample: number) =>
  Number.isNaN(current) ? sample : current + WEIGHT * (sample - current);

/**
 * Each webhook endpoint's sends in this process: those claimed and not yet answered, and how long its
 * answers take. A slow endpoint (see `answered`) may have at most `slowInFlight` sends at once here;
 * its other deliveries are not claimed but wait their turn out of the send slots (`reserveRooms`, and
 * the turns the caller hands out), so one slow or hanging endpoint never takes the slots other
 * endpoints' deliveries need (CONTRACT §18). Per process by design: it guards this process's slots;
 * the turns are shared through Redis.
 */
export class EndpointLoad {
  private readonly endpoints = new Map<string, Endpoint>();
  /** Moving average of the answer times of endpoints that are not slow: what this process sees as usual. */
  private typicalMs = Number.NaN;

  constructor(
    private readonly options: EndpointLoadOptions,
    private readonly logger: Logger,
  ) {}

  /**
   * For each slow endpoint, how many more of its deliveries a claim may take now, reserved until
   * `release`; every other endpoint's deliveries are claimed without limit.
   */
  reserveRooms(): Map<string, number> {
    const rooms = new Map<string, number>();
    for (const [webhookId, endpoint] of this.endpoints) {
      if (!endpoint.slow) continue;
      const room = Math.max(0, this.options.slowInFlight - endpoint.inFlight - endpoint.reserved);
      endpoint.reserved += room;
      rooms.set(webhookId, room);
    }
    return rooms;
  }

  /** The claim that reserved `rooms` has ended (its claimed deliveries were counted by `claimed`). */
  release(rooms: Map<string, number>): void {
    for (const [webhookId, room] of rooms) {
      const endpoint = this.endpoints.get(webhookId);
      if (endpoint) endpoint.reserved -= room;
    }
  }

  /** A delivery of the endpoint was claimed: its send begins. */
  claimed(webhookId: string): void {
    let endpoint = this.endpoints.get(webhookId);
    if (!endpoint) {
      endpoint = new Endpoint();
      this.endpoints.set(webhookId, endpoint);
    }
    endpoint.inFlight += 1;
  }

  /**
   * One of its sends has its answer (or failed) after `tookMs`. The endpoint becomes slow when the
   * send timed out, or when its answers take `slowSendMs` on average and `SLOWER` times the typical
   * answer. Compared with the others, not with a figure alone: when this process is itself overloaded,
   * every answer comes late and no endpoint is to blame. It stays slow until its answers average half
   * of `slowSendMs` (each lapse would let a wave of its sends take every slot again).
   */
  answered(webhookId: string, tookMs: number): void {
    const endpoint = this.endpoints.get(webhookId);
    if (!endpoint) return;
    endpoint.inFlight -= 1;
    endpoint.averageMs = average(endpoint.averageMs, tookMs);
    const { slowSendMs, timeoutMs } = this.options;
    // Before any other answer there is nothing to compare with (NaN): only a timeout makes it slow.
    const slowerThanOthers = endpoint.averageMs >= SLOWER * this.typicalMs;
    const slow =
      tookMs >= timeoutMs ||
      (endpoint.slow ? endpoint.averageMs >= slowSendMs / 2 : endpoint.averageMs >= slowSendMs && slowerThanOthers);
    if (!slow) this.typicalMs = average(this.typicalMs, tookMs);
    if (slow !== endpoint.slow) {
      endpoint.slow = slow;
      this.logger.warn(
        { webhookId, averageMs: Math.round(endpoint.averageMs), inFlight: endpoint.inFlight },
        slow
          ? "webhook endpoint slow: its sends in this process capped, the rest wait their turn"
          : "webhook endpoint no longer slow",
      );
    }
    // An idle endpoint that answers quickly needs no entry (the map stays as small as the busy endpoints).
    if (endpoint.inFlight === 0 && endpoint.reserved === 0 && !slow) this.endpoints.delete(webhookId);
  }

  /** Turns per second a slow endpoint's waiting deliveries get: as fast as its sends here free up. */
  turnsPerSecond(webhookId: string): number {
    const averageMs = this.endpoints.get(webhookId)?.averageMs;
    const ms = averageMs && averageMs > 0 ? averageMs : this.options.slowSendMs;
    return (this.options.slowInFlight * 1000) / ms;
  }
}
