import { newId } from "@outcomes/core";
import type { SqlPool } from "@outcomes/db";
import { describe, expect, it } from "vitest";
import { GroupCommit } from "./group-commit.js";
import { UnusableOutcomeError } from "./outcome-taker.js";
import type { SpinPlan } from "./spin-plan.js";

/** A server's ERROR reply: the statement was refused, nothing written. */
const refusedByServer = (code: string, constraint?: string) =>
  Object.assign(new Error(`pg ${code}`), { severity: "ERROR", code, constraint_name: constraint });

/** A pool whose every statement (a promise with `execute`, as postgres.js returns it) and transaction fails as given. */
const failingPool = (error: Error) =>
  ({
    unsafe: () => {
      const statement = Promise.reject(error);
      return Object.assign(statement, { execute: () => statement });
    },
    begin: async () => {
      throw error;
    },
  }) as unknown as SqlPool;

const plan = (position: SpinPlan["spin"]["position"]): SpinPlan =>
  ({
    spin: { id: newId("spn"), position, outcome: { tier: "T1", multiplierMillionths: 0 }, freeRoundsId: null },
    largeWin: false,
    blockBoundary: null,
    needsTransaction: false,
    key: null,
  }) as unknown as SpinPlan;

const commitWith = (error: Error, position: SpinPlan["spin"]["position"] = { blockId: 1, index: 3 }) =>
  new GroupCommit(failingPool(error), { maxSize: 10, maxWaitMs: 2, minReadyBlocks: 2 }).commit(plan(position));

describe("GroupCommit's refusals of a spin alone", () => {
  it("answers a reused outcome as unusable, so the spin takes the next one", async () => {
    await expect(commitWith(refusedByServer("23505", "spin_outcomes_pkey"))).rejects.toBeInstanceOf(
      UnusableOutcomeError,
    );
  });

  it("names a player's figure past its bound, with its range (KS-4103)", async () => {
    await expect(commitWith(refusedByServer("23514", "players_total_paid_bound"))).rejects.toMatchObject({
      code: "KS-4103",
      message: expect.stringMatching(/totalPaidUsd past 9007199254\.740991 USD/),
    });
    await expect(commitWith(refusedByServer("23514", "players_balance_bound"))).rejects.toMatchObject({
      code: "KS-4103",
      message: expect.stringMatching(/balanceUsd outside -9007199254\.740991\.\.9007199254\.740991 USD/),
    });
    await expect(commitWith(refusedByServer("22003"))).rejects.toMatchObject({
      message: expect.stringMatching(/totalSpins past 2147483647 spins/),
    });
  });

  it("passes any other failure on as it is", async () => {
    const lost = Object.assign(new Error("connection closed"), { code: "CONNECTION_CLOSED" });
    await expect(commitWith(lost)).rejects.toBe(lost);
  });
});
