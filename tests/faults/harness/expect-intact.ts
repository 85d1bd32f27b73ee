import { expect } from "vitest";
import { contiguous, type LedgerReport, type OutcomeReport } from "./invariants.js";

// The fault tests' shared assertions over the invariants' reports (invariants.ts stays free of
// vitest: the soak script reads the same reports).

/** How far a fault may bend the ledger: each test's bound and its reason are its own. */
export interface LedgerLimits {
  /** Spins in Postgres no client saw succeed. */
  unacknowledged: number;
}

/** The ledger checks every load test makes: nothing acknowledged lost or changed, no outcome twice, balances exact. */
export function expectLedgerIntact(ledger: LedgerReport, limits: LedgerLimits): void {
  // 200 means durable, with the same player and wager.
  expect(ledger.missing).toEqual([]);
  expect(ledger.mismatched).toEqual([]);
  expect(ledger.unacknowledged).toBeLessThanOrEqual(limits.unacknowledged);
  expect(ledger.duplicateOutcomes).toBe(0);
  expect(ledger.balanceMismatches).toEqual([]);
}

/** How far a fault may bend the outcome accounting: each test's bounds and their reason are its own. */
export interface OutcomeLimits {
  /** Items in the list already used by a spin. */
  queuedButSpent: number;
  /** Outcomes of loaded blocks neither queued nor spent. */
  stranded: number;
}

/** The outcome checks every load test makes once its generation has reconciled the game. */
export function expectOutcomesIntact(outcomes: OutcomeReport, limits: OutcomeLimits): void {
  // Blocks: unique, gap-free sequences, all loaded; the list holds each unused outcome once.
  expect(contiguous(outcomes.sequences)).toBe(true);
  expect(outcomes.loadedThrough).toBe(outcomes.blocks);
  expect(outcomes.duplicateQueued).toBe(0);
  expect(outcomes.foreignQueued).toBe(0);
  expect(outcomes.queuedButSpent).toBeLessThanOrEqual(limits.queuedButSpent);
  expect(outcomes.stranded).toBeLessThanOrEqual(limits.stranded);
}
