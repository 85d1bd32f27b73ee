import { encodeQueuedOutcome, parseQueueItem, ServiceError } from "@outcomes/core";
import type { SqlClient } from "@outcomes/db";
import { createLogger } from "@outcomes/runtime";
import { beforeEach, describe, expect, it } from "vitest";
import type { PartnerAuth } from "../auth/key-verifier.js";
import type { BucketDraw, Draw } from "../ratelimit/index.js";
import type { FreeRoundTerms } from "./free-round-cache.js";
import type { GameRules } from "./game-cache.js";
import { type TakenOutcome, UnusableOutcomeError } from "./outcome-queue.js";
import type { Committed, PrepareSpin, SpinCommitter } from "./spin-committer.js";
import { SpinService, type SpinServiceDeps } from "./spin-service.js";
import type { SpinPlan, WrittenSpin } from "./spin-writer.js";

/**
 * The spin path's branches with fakes (no Postgres, no Redis): the ones integration tests reach only
 * by fault injection. The fault suite proves the wiring.
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
const ALLOWED: Draw = { allowed: true, remaining: 9, resetMs: 100, retryAfterMs: 0 };
const REFUSED: Draw = { allowed: false, remaining: 0, resetMs: 1000, retryAfterMs: 500 };
const client = {} as SqlClient;

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
  return { item: parseQueueItem(raw), raw, queue: "q", retiredMarker: "m", remaining: 5 };
}

function written(plan: SpinPlan): WrittenSpin {
  return {
    spin: plan.spin,
    body: { spinId: plan.spin.id } as WrittenSpin["body"],
    largeWin: plan.largeWin,
    generationNeeded: false,
  };
}

/** Commits what `prepare` planned, or fails as told (each call takes the next failure, if any). */
class FakeCommitter implements SpinCommitter {
  readonly committed: SpinPlan[] = [];
  failures: unknown[] = [];
  recordedAnswer: "committed" | "absent" | Error = "absent";

  async commit(prepare: PrepareSpin): Promise<Committed> {
    const plan = await prepare(client);
    if (plan === null) return { refused: true };
    const failure = this.failures.shift();
    if (failure) {
      if (this.recordedAnswer === "committed") this.committed.push(plan);
      throw failure;
    }
    this.committed.push(plan);
    return { written: written(plan) };
  }

  async recorded(plan: SpinPlan): Promise<WrittenSpin | null> {
    if (this.recordedAnswer instanceof Error) throw this.recordedAnswer;
    return this.committed.includes(plan) ? written(plan) : null;
  }
}

let queue: TakenOutcome[];
let givenBack: TakenOutcome[];
let committer: FakeCommitter;
let draws: Draw[];
let service: SpinService;
let generationAskedFor: number[];

beforeEach(() => {
  queue = [item(1, 0), item(1, 1), item(1, 2)];
  givenBack = [];
  committer = new FakeCommitter();
  draws = [];
  generationAskedFor = [];
  const deps: SpinServiceDeps = {
    games: { get: async (id) => (id === game.id ? game : null) },
    freeRounds: { get: async (id) => grants.find((grant) => grant.id === id) ?? null },
    queue: {
      take: async (_game, bucket) => {
        if (bucket) bucket.draw = draws.shift() ?? ALLOWED;
        if (bucket?.draw?.allowed === false) return null;
        const next = queue.shift();
        if (!next) throw new ServiceError("KS-4203");
        return next;
      },
      giveBack: async (taken) => {
        givenBack.push(taken);
        queue.unshift(taken);
      },
    },
    blocks: { of: async (blockId) => (blockId === 1 ? { size: 100, codec: null } : null) },
    forced: { draw: async () => ({ tier: "T6", multiplierMillionths: 1_000_000_000, reelSymbols: [["S"]] }) },
    drawBucket: async (bucket) => {
      bucket.draw = draws.shift() ?? ALLOWED;
      return bucket.draw;
    },
    committer,
    hints: {
      eventsWritten: () => {},
      generationNeeded: async (gameId) => {
        generationAskedFor.push(gameId);
      },
      counted: () => {},
    },
    logger: createLogger("silent", "spin-service-test"),
    minReadyBlocks: 2,
  };
  service = new SpinService(deps);
});

const grants: FreeRoundTerms[] = [
  { id: "fr_own", partnerId: "ptr_1", environment: "sandbox", gameId: 7, wagerMicros: 2_500_000 },
  { id: "fr_elsewhere", partnerId: "ptr_1", environment: "sandbox", gameId: 8, wagerMicros: 1_000_000 },
  { id: "fr_theirs", partnerId: "ptr_2", environment: "sandbox", gameId: 7, wagerMicros: 1_000_000 },
  { id: "fr_production", partnerId: "ptr_1", environment: "production", gameId: 7, wagerMicros: 1_000_000 },
];

const bucket = (): BucketDraw => ({ bucket: "spin", key: "rl", limit: 10, draw: null });

describe("SpinService", () => {
  it("commits the queue's next outcome, drawing the bucket once", async () => {
    const spinBucket = bucket();
    const reply = await service.spin(partner, request, spinBucket);
    expect(reply?.replayed).toBe(false);
    expect(committer.committed.map((plan) => plan.spin.position)).toEqual([{ blockId: 1, index: 0 }]);
    expect(spinBucket.draw).toEqual(ALLOWED);
  });

  it("answers null when the bucket refuses, taking and writing nothing", async () => {
    draws = [REFUSED];
    const spinBucket = bucket();
    expect(await service.spin(partner, request, spinBucket)).toBeNull();
    expect(spinBucket.draw).toEqual(REFUSED);
    expect([queue.length, committer.committed.length]).toEqual([3, 0]);
  });

  it("refuses a forced spin over the limit after drawing it, writing nothing", async () => {
    draws = [REFUSED];
    expect(await service.spin(partner, { ...request, forceTier: "T6" }, bucket())).toBeNull();
    expect(committer.committed).toEqual([]);
  });

  it("answers the committed spin when the commit's reply was lost but the spin stands", async () => {
    committer.failures = [lostReply()];
    committer.recordedAnswer = "committed";
    const reply = await service.spin(partner, request, bucket());
    expect(reply?.body.spinId).toBe(committer.committed[0]?.spin.id);
    expect(givenBack).toEqual([]);
  });

  it("says the fate is unknown (KS-5003) when even the look-up after a lost reply fails", async () => {
    committer.failures = [lostReply()];
    committer.recordedAnswer = new Error("still down");
    await expect(service.spin(partner, request, bucket())).rejects.toMatchObject({
      code: "KS-5003",
      message: expect.stringMatching(/did not confirm whether the spin was recorded/),
    });
  });

  it("gives the outcome back and answers KS-5003 when the write was refused (nothing deducted)", async () => {
    committer.failures = [refusedByServer("40001")];
    await expect(service.spin(partner, request, bucket())).rejects.toMatchObject({ code: "KS-5003" });
    expect(givenBack.map((taken) => taken.item.index)).toEqual([0]);
    expect(queue[0]?.item.index).toBe(0);
  });

  it("drops an outcome already used and serves the next one, drawing the bucket only once", async () => {
    committer.failures = [refusedByServer("23505", "spin_outcomes_pkey")];
    draws = [ALLOWED, REFUSED]; // a second draw would be refused
    const reply = await service.spin(partner, request, bucket());
    expect(reply?.replayed).toBe(false);
    expect(committer.committed.map((plan) => plan.spin.position?.index)).toEqual([1]);
    expect(givenBack).toEqual([]);
  });

  it("drops outcomes of unknown blocks, at most 20 in a row, then answers KS-5003", async () => {
    queue = Array.from({ length: 30 }, (_, i) => item(99, i));
    await expect(service.spin(partner, request, bucket())).rejects.toMatchObject({
      code: "KS-5003",
      message: expect.stringMatching(/no usable outcome/),
    });
    expect(queue).toHaveLength(30 - 21);
  });

  it("refuses a player past a bound with KS-4103 naming the figure, the outcome given back", async () => {
    committer.failures = [refusedByServer("23514", "players_total_paid_bound")];
    await expect(service.spin(partner, request, bucket())).rejects.toMatchObject({
      code: "KS-4103",
      message: expect.stringMatching(/totalPaidUsd past 9007199254\.740991 USD/),
    });
    expect(givenBack).toHaveLength(1);
  });

  it("asks for generation on an empty queue and answers KS-4203", async () => {
    queue = [];
    await expect(service.spin(partner, request, bucket())).rejects.toMatchObject({ code: "KS-4203" });
    expect(generationAskedFor).toEqual([7]);
  });

  it("keeps going when the give-back fails: the outcome stays in its sealed block", async () => {
    committer.failures = [refusedByServer("40001")];
    const failing = service as unknown as { deps: SpinServiceDeps };
    failing.deps.queue.giveBack = async () => {
      throw new Error("redis down");
    };
    await expect(service.spin(partner, request, bucket())).rejects.toMatchObject({ code: "KS-5003" });
  });

  it("applies the game's rules before taking anything", async () => {
    await expect(service.spin(partner, { ...request, gameId: 8 }, bucket())).rejects.toMatchObject({ code: "KS-4006" });
    await expect(service.spin(partner, { ...request, wagerUsd: 1000 }, bucket())).rejects.toMatchObject({
      code: "KS-4103",
    });
    expect(queue).toHaveLength(3);
  });

  it("plans a free-round spin at its grant's wager, with or without wagerUsd equal to it", async () => {
    const free = { gameId: 7, playerId: "p1", freeRoundsId: "fr_own" };
    await service.spin(partner, free, bucket());
    await service.spin(partner, { ...free, wagerUsd: 2.5 }, bucket());
    expect(committer.committed.map((plan) => [plan.spin.wagerMicros, plan.spin.freeRoundsId])).toEqual([
      [2_500_000, "fr_own"],
      [2_500_000, "fr_own"],
    ]);
  });

  it("refuses a free-round spin before taking anything: the grant's terms, the game, the wager", async () => {
    const free = { gameId: 7, playerId: "p1" };
    const refusal = (json: object) => service.spin(partner, { ...free, ...json }, bucket());
    for (const freeRoundsId of ["fr_unknown", "fr_theirs", "fr_production"]) {
      await expect(refusal({ freeRoundsId })).rejects.toMatchObject({ code: "KS-4219" });
    }
    await expect(refusal({ freeRoundsId: "fr_elsewhere" })).rejects.toMatchObject({
      code: "KS-4218",
      message: expect.stringMatching(/for game 8/),
    });
    await expect(refusal({ freeRoundsId: "fr_own", wagerUsd: 2.4 })).rejects.toMatchObject({ code: "KS-4101" });
    await expect(refusal({})).rejects.toMatchObject({ code: "KS-4102" });
    expect(queue).toHaveLength(3);
    expect(committer.committed).toEqual([]);
  });

  it("never gives back an unusable outcome", async () => {
    committer.failures = [new UnusableOutcomeError("closed block")];
    const reply = await service.spin(partner, request, bucket());
    expect(reply).not.toBeNull();
    expect(givenBack).toEqual([]);
  });
});
