import { encodeQueuedOutcome, ServiceError } from "@outcomes/core";
import type { SqlClient } from "@outcomes/db";
import { presentSpin } from "@outcomes/records";
import { createLogger } from "@outcomes/runtime";
import { beforeEach, describe, expect, it } from "vitest";
import type { PartnerAuth } from "../auth/key-verifier.js";
import type { Decision } from "../ratelimit/index.js";
import type { FreeRoundTerms } from "./free-round-cache.js";
import type { GameRules } from "./game-cache.js";
import { type TakenOutcome, UnusableOutcomeError } from "./outcome-taker.js";
import { type SpinPlan, SpinPlanner } from "./spin-plan.js";
import { type SpinAnswer, SpinService, type SpinServiceDeps } from "./spin-service.js";
import type { SpinDone } from "./write-spins.js";

/**
 * The spin pipeline's branches with fakes (no Postgres, no Redis): the ones integration tests reach
 * only by fault injection. The fault suite proves the wiring.
 */
const partner = { partnerId: "ptr_1", environment: "sandbox", keyId: "key_1" } as unknown as PartnerAuth;
const game: GameRules = {
  id: 7,
  partnerId: "ptr_1",
  environment: "sandbox",
  parSheetId: "par_1",
  isActive: true,
  minWagerMicros: null,
  maxWagerMicros: 100_000_000,
  largeWinThresholdMicros: 1_000_000_000,
} as GameRules;
const request = { gameId: 7, playerId: "p1", wagerUsd: 1 };
const decisionOf = (allowed: boolean): Decision => ({
  admitted: allowed,
  bucket: "spin",
  limit: 10,
  draw: { allowed, remaining: allowed ? 9 : 0, resetMs: 1000, retryAfterMs: allowed ? 0 : 500 },
});
const ALLOWED = decisionOf(true);
const REFUSED = decisionOf(false);

/** A server's ERROR reply (the statement was refused: certainly not committed). */
const refusedByServer = (code: string, constraint?: string) =>
  Object.assign(new Error(`pg ${code}`), { severity: "ERROR", code, constraint_name: constraint });
/** No answer: the connection went away after the COMMIT was sent. */
const lostReply = () => Object.assign(new Error("connection closed"), { code: "CONNECTION_CLOSED" });

function item(blockId: number, index: number): TakenOutcome {
  const raw = encodeQueuedOutcome({
    blockId,
    index,
    tier: "T1",
    multiplierMillionths: 2_000_000,
    reelSymbols: [["A"], ["A"], ["A"]],
  });
  return { raw, game, remaining: 5 };
}

const indexOf = (taken: TakenOutcome) => JSON.parse(taken.raw).i as number;

function done(plan: SpinPlan): SpinDone {
  return {
    body: presentSpin({
      id: plan.spin.id,
      gameId: plan.spin.gameId,
      externalPlayerId: plan.spin.externalPlayerId,
      wagerMicros: plan.spin.wagerMicros,
      prizeTier: plan.spin.outcome.tier,
      multiplierMillionths: plan.spin.outcome.multiplierMillionths,
      payoutMicros: plan.spin.payoutMicros,
      balanceAfterMicros: 0,
      presentation: plan.spin.presentation,
      createdAt: new Date(),
      position: plan.spin.position,
      voided: null,
      freeRound: null,
    }),
    replayed: false,
    wrote: { spin: plan.spin, largeWin: plan.largeWin, generationNeeded: false },
  };
}

/** Commits each plan, or fails as told (each call takes the next failure, if any). */
class FakeCommits {
  readonly committed: SpinPlan[] = [];
  failures: unknown[] = [];
  recordedAnswer: "committed" | "absent" | Error = "absent";

  async commit(plan: SpinPlan): Promise<SpinDone> {
    const failure = this.failures.shift();
    if (failure) {
      if (this.recordedAnswer === "committed") this.committed.push(plan);
      throw failure;
    }
    this.committed.push(plan);
    return done(plan);
  }

  async recorded(plan: SpinPlan): Promise<SpinDone | null> {
    if (this.recordedAnswer instanceof Error) throw this.recordedAnswer;
    return this.committed.includes(plan) ? done(plan) : null;
  }
}

let queue: TakenOutcome[];
let givenBack: TakenOutcome[];
let commits: FakeCommits;
let decisions: Decision[];
let takes: number;
let service: SpinService;
let deps: SpinServiceDeps;
let generationAskedFor: number[];

beforeEach(() => {
  queue = [item(1, 0), item(1, 1), item(1, 2)];
  givenBack = [];
  commits = new FakeCommits();
  decisions = [];
  takes = 0;
  generationAskedFor = [];
  const nextDecision = () => decisions.shift() ?? ALLOWED;
  deps = {
    games: { get: async (id) => (id === game.id ? game : null) },
    freeRounds: { get: async (id) => grants.find((grant) => grant.id === id) ?? null },
    taker: {
      take: async () => {
        const decision = nextDecision();
        if (!decision.admitted) return { decision, outcome: null };
        takes++;
        return { decision, outcome: queue.shift() ?? null };
      },
      admitOnly: async () => ({ decision: nextDecision(), outcome: null }),
      takeAgain: async () => {
        takes++;
        const next = queue.shift();
        if (!next) throw new ServiceError("KS-4203");
        return next;
      },
      giveBack: async (taken) => {
        givenBack.push(taken);
        queue.unshift(taken);
      },
    },
    planner: new SpinPlanner(
      { of: async (blockId) => (blockId === 1 ? { size: 100, codec: null } : null) },
      { draw: async () => ({ tier: "T6", multiplierMillionths: 1_000_000_000, reelSymbols: [["S"]] }) },
      {} as SqlClient,
    ),
    commits,
    findRecord: async () => null,
    checksOn: async () => true,
    signals: {
      eventsWritten: () => {},
      generationNeeded: async (gameId) => {
        generationAskedFor.push(gameId);
      },
      spinCommitted: () => {},
      spinRefused: () => {},
    },
    logger: createLogger("silent", "spin-service-test"),
  };
  service = new SpinService(deps);
});

const grants: FreeRoundTerms[] = [
  { id: "fr_own", partnerId: "ptr_1", environment: "sandbox", gameId: 7, wagerMicros: 2_500_000 },
  { id: "fr_elsewhere", partnerId: "ptr_1", environment: "sandbox", gameId: 8, wagerMicros: 1_000_000 },
  { id: "fr_theirs", partnerId: "ptr_2", environment: "sandbox", gameId: 7, wagerMicros: 1_000_000 },
  { id: "fr_production", partnerId: "ptr_1", environment: "production", gameId: 7, wagerMicros: 1_000_000 },
];

/** The spin, or the failure's code and message. */
function spunOf(answer: SpinAnswer): SpinDone {
  if (!("spun" in answer)) throw new Error(`not spun: ${JSON.stringify(answer)}`);
  return answer.spun;
}
function failureOf(answer: SpinAnswer): { code: string; message: string } {
  if (!("failed" in answer)) throw new Error(`did not fail: ${JSON.stringify(answer)}`);
  return { code: answer.failed.code, message: answer.failed.message };
}

describe("SpinService", () => {
  it("commits the queue's next outcome, answering the bucket's decision", async () => {
    const answer = await service.spin(partner, request);
    expect(spunOf(answer).replayed).toBe(false);
    expect(commits.committed.map((plan) => plan.spin.position)).toEqual([{ blockId: 1, index: 0 }]);
    expect("decision" in answer && answer.decision).toEqual(ALLOWED);
  });

  it("answers over the limit when the bucket refuses, taking and writing nothing", async () => {
    decisions = [REFUSED];
    expect(await service.spin(partner, request)).toEqual({ overLimit: REFUSED });
    expect([queue.length, commits.committed.length]).toEqual([3, 0]);
  });

  it("refuses a forced spin over the limit after drawing it, writing nothing", async () => {
    decisions = [REFUSED];
    expect(await service.spin(partner, { ...request, forceTier: "T6" })).toEqual({ overLimit: REFUSED });
    expect(commits.committed).toEqual([]);
  });

  it("answers the committed spin when the commit's reply was lost but the spin stands", async () => {
    commits.failures = [lostReply()];
    commits.recordedAnswer = "committed";
    const answer = await service.spin(partner, request);
    expect(spunOf(answer).body.spinId).toBe(commits.committed[0]?.spin.id);
    expect(givenBack).toEqual([]);
  });

  it("says the fate is unknown (KS-5003) when even the look-up after a lost reply fails", async () => {
    commits.failures = [lostReply()];
    commits.recordedAnswer = new Error("still down");
    expect(failureOf(await service.spin(partner, request))).toEqual({
      code: "KS-5003",
      message: expect.stringMatching(/did not confirm whether the spin was recorded/),
    });
    expect(givenBack).toEqual([]);
  });

  it("gives the outcome back and answers KS-5003 when the write was refused (nothing deducted)", async () => {
    commits.failures = [refusedByServer("40001")];
    const answer = await service.spin(partner, request);
    expect(failureOf(answer).code).toBe("KS-5003");
    expect("decision" in answer && answer.decision).toEqual(ALLOWED);
    expect(givenBack.map(indexOf)).toEqual([0]);
    expect(indexOf(queue[0]!)).toBe(0);
  });

  it("drops an outcome already used and serves the next one, drawing the bucket only once", async () => {
    commits.failures = [new UnusableOutcomeError("outcome already used")];
    decisions = [ALLOWED, REFUSED]; // a second draw would be refused
    expect(spunOf(await service.spin(partner, request)).replayed).toBe(false);
    expect(commits.committed.map((plan) => plan.spin.position?.index)).toEqual([1]);
    expect([givenBack, takes]).toEqual([[], 2]);
  });

  it("drops outcomes of unknown blocks, at most 20 in a row, then answers KS-5003", async () => {
    queue = Array.from({ length: 30 }, (_, i) => item(99, i));
    expect(failureOf(await service.spin(partner, request))).toEqual({
      code: "KS-5003",
      message: expect.stringMatching(/no usable outcome/),
    });
    expect(queue).toHaveLength(30 - 21);
  });

  it("answers a refusal the commit names (KS-4103) as it is, the outcome given back, no record looked up", async () => {
    let lookedUp = 0;
    deps.findRecord = async () => {
      lookedUp++;
      return null;
    };
    commits.failures = [new ServiceError("KS-4103", { message: "past a bound" })];
    expect(failureOf(await service.spin(partner, request, "key-1"))).toEqual({
      code: "KS-4103",
      message: "past a bound",
    });
    expect([givenBack.length, lookedUp]).toEqual([1, 0]);
  });

  it("asks for generation on an empty queue and answers KS-4203", async () => {
    queue = [];
    expect(failureOf(await service.spin(partner, request)).code).toBe("KS-4203");
    expect(generationAskedFor).toEqual([7]);
  });

  it("keeps going when the give-back fails: the outcome stays in its sealed block", async () => {
    commits.failures = [refusedByServer("40001")];
    deps.taker.giveBack = async () => {
      throw new Error("redis down");
    };
    expect(failureOf(await service.spin(partner, request)).code).toBe("KS-5003");
  });

  it("applies the game's rules before taking anything", async () => {
    expect(failureOf(await service.spin(partner, { ...request, gameId: 8 })).code).toBe("KS-4006");
    expect(failureOf(await service.spin(partner, { ...request, wagerUsd: 1000 })).code).toBe("KS-4103");
    expect([queue.length, takes]).toEqual([3, 0]);
  });

  it("answers a keyed spin its game now refuses from its key's record when its first request committed", async () => {
    const stored = spunOf(await service.spin(partner, request, "key-1"));
    deps.findRecord = async (scope) =>
      scope.key === "key-1"
        ? { requestHash: commits.committed[0]!.key!.hash, responseStatus: 200, responseBody: stored.body }
        : null;
    deps.games.get = async () => ({ ...game, isActive: false });
    const replayed = spunOf(await service.spin(partner, request, "key-1"));
    expect([replayed.replayed, replayed.body.spinId]).toEqual([true, stored.body.spinId]);
    expect(failureOf(await service.spin(partner, request, "key-2")).code).toBe("KS-4202");
    expect(failureOf(await service.spin(partner, { ...request, wagerUsd: 2 }, "key-1")).code).toBe("KS-4101");
  });

  it("plans a free-round spin at its grant's wager, with or without wagerUsd equal to it", async () => {
    const free = { gameId: 7, playerId: "p1", freeRoundsId: "fr_own" };
    await service.spin(partner, free);
    await service.spin(partner, { ...free, wagerUsd: 2.5 });
    expect(commits.committed.map((plan) => [plan.spin.wagerMicros, plan.spin.freeRoundsId])).toEqual([
      [2_500_000, "fr_own"],
      [2_500_000, "fr_own"],
    ]);
  });

  it("refuses a free-round spin before drawing or taking anything: the grant's terms, the game, the wager", async () => {
    const free = { gameId: 7, playerId: "p1" };
    const refusal = async (json: object) => {
      const answer = await service.spin(partner, { ...free, ...json });
      return { ...failureOf(answer), decision: "decision" in answer ? answer.decision : undefined };
    };
    for (const freeRoundsId of ["fr_unknown", "fr_theirs", "fr_production"]) {
      expect(await refusal({ freeRoundsId })).toMatchObject({ code: "KS-4219", decision: null });
    }
    expect(await refusal({ freeRoundsId: "fr_elsewhere" })).toMatchObject({
      code: "KS-4218",
      message: expect.stringMatching(/for game 8/),
    });
    expect(await refusal({ freeRoundsId: "fr_own", wagerUsd: 2.4 })).toMatchObject({ code: "KS-4101" });
    expect(await refusal({})).toMatchObject({ code: "KS-4102" });
    expect([queue.length, takes, commits.committed]).toEqual([3, 0, []]);
  });

  it("never gives back an unusable outcome", async () => {
    commits.failures = [new UnusableOutcomeError("closed block")];
    expect(spunOf(await service.spin(partner, request)).replayed).toBe(false);
    expect(givenBack).toEqual([]);
  });
});
