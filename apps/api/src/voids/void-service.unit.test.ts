import type { RecalledSpin, SpinForVoid, SpinVoidFacts } from "@outcomes/db";
import { describe, expect, it } from "vitest";
import { VoidService, type VoidStore } from "./void-service.js";

/** The void's branches with a fake store (no Postgres): the rules between the lock and the write. */
const owner = { partnerId: "ptr_1", environment: "sandbox" } as const;
const createdAt = new Date("2026-11-01T12:00:00.000Z");
const HOUR = 3_600_000;
const found = {
  spin: { id: "spn_1", createdAt },
  externalPlayerId: "p-1",
  voided: null,
  freeRound: null,
} as unknown as RecalledSpin;
const earlierVoid: SpinVoidFacts = { reason: "first", voidedAt: new Date("2026-11-01T13:00:00.000Z") };

function service(locked: Partial<SpinForVoid>, options: { recordFails?: unknown } = {}) {
  const written: Array<{ spinId: string; reason: string }> = [];
  let events = 0;
  let transactions = 0;
  const store: VoidStore = {
    lockForVoid: async () => ({ found, now: createdAt, earlier: null, ...locked }),
    recordVoid: async (spin, reason) => {
      if (options.recordFails) throw options.recordFails;
      written.push({ spinId: spin.spin.id, reason });
      return { reason, voidedAt: new Date("2026-11-02T00:00:00.000Z") };
    },
  };
  const voids = new VoidService({
    inTransaction: async (work) => {
      transactions++;
      return work(store);
    },
    windowHours: 72,
    eventsWritten: () => {
      events++;
    },
  });
  return { voids, written, counts: () => ({ events, transactions }) };
}

describe("VoidService", () => {
  it("voids a spin within the window, in one transaction, and pokes the outbox after it", async () => {
    const { voids, written, counts } = service({ now: new Date(createdAt.getTime() + 72 * HOUR - 1) });
    const answer = await voids.void(owner, "spn_1", "wallet refused");
    expect(answer.voidedNow).toBe(true);
    expect(answer.spin.voided).toEqual({ reason: "wallet refused", voidedAt: new Date("2026-11-02T00:00:00.000Z") });
    expect(written).toEqual([{ spinId: "spn_1", reason: "wallet refused" }]);
    expect(counts()).toEqual({ events: 1, transactions: 1 });
  });

  it("refuses a spin from the window's end on (409 KS-4217), on the database's clock, writing nothing", async () => {
    const { voids, written, counts } = service({ now: new Date(createdAt.getTime() + 72 * HOUR) });
    await expect(voids.void(owner, "spn_1", "late")).rejects.toMatchObject({
      code: "KS-4217",
      message: expect.stringContaining("within 72 hours"),
    });
    expect(written).toEqual([]);
    expect(counts().events).toBe(0);
  });

  it("answers an earlier void whenever asked, even past the window, and changes nothing", async () => {
    const { voids, written, counts } = service({
      now: new Date(createdAt.getTime() + 1000 * HOUR),
      earlier: earlierVoid,
    });
    const answer = await voids.void(owner, "spn_1", "again");
    expect(answer).toEqual({ spin: { ...found, voided: earlierVoid }, voidedNow: false });
    expect(written).toEqual([]);
    expect(counts().events).toBe(0);
  });

  it("turns a player's figure past its bound into 400 KS-4103 naming it; other failures pass as they are", async () => {
    const bound = Object.assign(new Error("check"), { code: "23514", constraint_name: "players_balance_bound" });
    await expect(service({}, { recordFails: bound }).voids.void(owner, "spn_1", "r")).rejects.toMatchObject({
      code: "KS-4103",
      message: expect.stringContaining("balanceUsd"),
    });
    const other = new Error("connection lost");
    await expect(service({}, { recordFails: other }).voids.void(owner, "spn_1", "r")).rejects.toBe(other);
  });
});
