import { describe, expect, it } from "vitest";
import { EVENT_TYPES, newEventEnvelope, serializeEnvelope } from "./events.js";

describe("event envelopes", () => {
  it("knows exactly the six event types", () => {
    expect(EVENT_TYPES).toEqual([
      "spin.large_win",
      "settlement.report_ready",
      "block.low_reserve",
      "api_key.expiring",
      "spin.voided",
      "webhook.disabled",
    ]);
  });

  it("serialises in the documented key order whatever order the payload has", () => {
    const envelope = newEventEnvelope("block.low_reserve", "sandbox", { gameId: 3 }, new Date("2026-01-02T03:04:05Z"));
    expect(envelope.id).toMatch(/^evt_/);
    const reordered = {
      data: envelope.data,
      sequence: 7,
      environment: "sandbox",
      createdAt: envelope.createdAt,
      type: envelope.type,
      id: envelope.id,
    };
    expect(serializeEnvelope(reordered as typeof envelope & { sequence: number })).toBe(
      `{"id":"${envelope.id}","sequence":7,"type":"block.low_reserve","createdAt":"2026-01-02T03:04:05.000Z","environment":"sandbox","data":{"gameId":3}}`,
    );
  });
});
