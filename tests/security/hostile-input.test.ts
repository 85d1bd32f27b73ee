import { testApiForFile } from "@outcomes/testkit/file-fixture";
import { fillTestGameQueue } from "@outcomes/testkit/games";
import fc from "fast-check";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { hostileRequests } from "./hostile-request.js";
import { expectHarmless } from "./probe.js";
import { describeRoute, PARTNER_ROUTES, uncoveredRoutes } from "./route-table.js";
import { buildWorld, WORLD_ENV, type World } from "./world.js";

/**
 * Hostile input on every partner route (issue 8, item 5): fast-check generates requests with one
 * hostile part (body, path segment, query, Content-Type or Idempotency-Key) and everything else
 * valid. Runs per route are few because each is a real HTTP request plus two state digests;
 * `FUZZ_RUNS=500` explores further (a failure prints the seed and the shrunk request).
 */
const RUNS_PER_ROUTE = Number(process.env.FUZZ_RUNS ?? 25);

const api = testApiForFile(WORLD_ENV);
let world: World;

beforeAll(async () => {
  world = await buildWorld(api, await api.createPartner(), "sandbox");
});

/** Fuzzed spins that happen to be valid consume outcomes; an empty queue would answer 503. */
async function keepReserve() {
  const length = await api.deps.redis.llen(api.deps.keys.outcomeQueue(await api.gameOwner(world.gameId)));
  if (length < 50) await fillTestGameQueue(api, world.gameId);
}

beforeEach(keepReserve);

describe("hostile input on every partner route", () => {
  it("covers every declared partner route", () => {
    expect(uncoveredRoutes()).toEqual({ missing: [], stale: [] });
  });

  for (const route of PARTNER_ROUTES) {
    it(`${describeRoute(route)}: 2xx, or 4xx with a KS- code that changed nothing`, async () => {
      await fc.assert(
        fc.asyncProperty(hostileRequests(route, world), async (request) => {
          await keepReserve();
          await expectHarmless(api, request, world.apiKey);
        }),
        { numRuns: RUNS_PER_ROUTE },
      );
    });
  }
});
