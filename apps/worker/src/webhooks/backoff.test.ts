import { describe, expect, it } from "vitest";
import { AttemptFailedError, retryDelayMs, webhookBackoffStrategy } from "./backoff.js";

const DELAYS = [60_000, 300_000, 900_000, 3_600_000];

describe("webhook backoff", () => {
  it("waits WEBHOOK_RETRY_DELAYS_MS[attemptsMade - 1] after each failed attempt", () => {
    const strategy = webhookBackoffStrategy(DELAYS);
    expect([1, 2, 3, 4].map((attemptsMade) => strategy(attemptsMade, "webhook-schedule"))).toEqual(DELAYS);
  });

  it("follows the attempt number Postgres recorded when BullMQ's count lags (a stalled job)", () => {
    const strategy = webhookBackoffStrategy(DELAYS);
    expect(strategy(1, "webhook-schedule", new AttemptFailedError(3, "Receiver answered HTTP 500"))).toBe(900_000);
    expect(strategy(2, "webhook-schedule", new Error("not an attempt"))).toBe(300_000);
  });

  it("stays within the schedule at its ends", () => {
    expect(retryDelayMs(DELAYS, 0)).toBe(60_000);
    expect(retryDelayMs(DELAYS, 9)).toBe(3_600_000);
  });
});
