import { setTimeout as sleep } from "node:timers/promises";
import { type RedisClient, redisKeys } from "@outcomes/queue";
import { createLogger } from "@outcomes/runtime";
import { deleteTestKeys, testRedis, testRedisPrefix } from "@outcomes/testkit/databases";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EndpointLine } from "./endpoint-line.js";

const prefix = testRedisPrefix();
const keys = redisKeys(prefix);
let redis: RedisClient;

beforeAll(() => {
  redis = testRedis();
});
afterAll(async () => {
  await redis?.quit();
  await deleteTestKeys(prefix);
});

/** A line as one worker process has it (two of them share it through Redis), its wakes recorded. */
function lineOf(options: { perEndpoint: number; leaseMs: number; patienceMs?: number }) {
  const woken: string[][] = [];
  const line = new EndpointLine(redis, keys, {
    ...options,
    wake: (ids) => woken.push(ids),
    logger: createLogger("silent", "endpoint-line-test"),
  });
  return { line, woken };
}

describe("an endpoint's line (its sends in flight, across the workers)", () => {
  it("gives at most `cap` slots, lines the rest up in order, and a freed slot goes to the head, not to a newcomer", async () => {
    const first = lineOf({ perEndpoint: 2, leaseMs: 10_000 });
    const second = lineOf({ perEndpoint: 2, leaseMs: 10_000 });
    expect(await first.line.take("whk_a", "d1")).toBeNull();
    expect(await second.line.take("whk_a", "d2")).toBeNull();
    // Full: d3 then d4 wait, each told when to come back at the latest (a lease per cap ahead).
    expect((await first.line.take("whk_a", "d3"))?.waitMs).toBe(10_000);
    expect((await second.line.take("whk_a", "d4"))?.waitMs).toBe(10_000);
    expect((await second.line.take("whk_a", "d5"))?.waitMs).toBe(20_000);
    // Another endpoint is not concerned.
    expect(await second.line.take("whk_b", "e1")).toBeNull();

    // d1's send ends: the head of the line is woken, and only it fits.
    await first.line.leave("whk_a", "d1");
    expect(first.woken).toEqual([["d3"]]);
    expect(await second.line.take("whk_a", "d6")).not.toBeNull();
    expect(await second.line.take("whk_a", "d4")).not.toBeNull();
    expect(await first.line.take("whk_a", "d3")).toBeNull();
    // Both ends free two slots: d4 and d5 go, in that order, and d6 after them.
    await second.line.leave("whk_a", "d2");
    await second.line.leave("whk_a", "d3");
    expect(second.woken.at(-1)).toEqual(["d4", "d5"]);
    expect(await second.line.take("whk_a", "d6")).not.toBeNull();
    expect(await second.line.take("whk_a", "d5")).toBeNull();
    expect(await second.line.take("whk_a", "d4")).toBeNull();
    expect(await second.line.take("whk_a", "d6")).not.toBeNull();
  });

  it("takes a lapsed lease back (a worker that died mid-send), and a waiting delivery not back in time loses its place", async () => {
    const { line } = lineOf({ perEndpoint: 1, leaseMs: 100, patienceMs: 50 });
    expect(await line.take("whk_c", "dead-send")).toBeNull();
    expect((await line.take("whk_c", "lost-job"))?.waitMs).toBe(100);
    await sleep(300);
    // The lease lapsed and the waiting one's deadline (100 + 50 ms) passed: a newcomer goes.
    expect(await line.take("whk_c", "newcomer")).toBeNull();
    expect((await line.take("whk_c", "lost-job"))?.waitMs).toBe(100);
  });

  it("lets a delivery wait in the process, woken as soon as a send of that process ends, or told to come back later", async () => {
    const { line, woken } = lineOf({ perEndpoint: 1, leaseMs: 10_000 });
    expect(await line.take("whk_d", "sending")).toBeNull();
    const started = performance.now();
    const joined = (await line.take("whk_d", "waiting"))!;
    const waiting = line.waitHere("whk_d", "waiting", joined);
    await sleep(50);
    await line.leave("whk_d", "sending");
    expect(await waiting).toBeNull();
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(woken).toEqual([]);
    // No send ends within its wait: it keeps its place and is told when to come back.
    const later = (await line.take("whk_d", "later"))!;
    expect((await line.waitHere("whk_d", "later", later, 100))?.waitMs).toBe(10_000);
    expect((await line.take("whk_d", "newcomer"))?.waitMs).toBe(20_000);
  });

  it("does not wait in the process for a slow endpoint (its oldest send in flight unanswered for a second)", async () => {
    const { line } = lineOf({ perEndpoint: 1, leaseMs: 10_000 });
    expect(await line.take("whk_e", "hanging")).toBeNull();
    await sleep(1_100);
    const joined = (await line.take("whk_e", "next"))!;
    expect(joined.oldestSendMs).toBeGreaterThanOrEqual(1_000);
    const started = performance.now();
    expect(await line.waitHere("whk_e", "next", joined)).toEqual(joined);
    expect(performance.now() - started).toBeLessThan(100);
  });
});
