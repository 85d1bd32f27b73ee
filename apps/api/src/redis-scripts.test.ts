import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api.close();
});

type Scripted = {
  draws(...args: Array<string | number>): Promise<unknown[]>;
  giveBack(queue: string, retired: string, item: string): Promise<number>;
};

describe("the request path's Redis scripts", () => {
  it("are defined before the first request, so their first calls can share an auto-pipeline", async () => {
    // A command defined while the tick's pipeline already gathers others is missing from it, which
    // fails that call and throws inside ioredis (redis/ioredis#1931): the first spin of a fresh
    // process next to other traffic crashed it. Here, with no request served yet, all go in one tick.
    const redis = api.deps.redis as typeof api.deps.redis & Scripted;
    const { keys } = api.deps;
    // The service's own key names: on a cluster a script's keys must share a hash slot.
    const owner = { partnerId: "ptr_probe", environment: "sandbox" };
    const queue = keys.outcomeQueue({ id: 1, ...owner });
    const answers = await Promise.all([
      redis.get(keys.maintenance),
      redis.draws(2, keys.rateLimit("default", owner.partnerId, owner.environment), queue, 10, 0),
      redis.draws(
        4,
        keys.rateLimit("spin", owner.partnerId, owner.environment),
        queue,
        keys.rateLimit("spin", owner.partnerId, owner.environment),
        queue,
        10,
        1,
        10,
        1,
      ),
      redis.giveBack(queue, keys.outcomesRetired({ id: 1, ...owner }, 1), "item"),
    ]);
    expect(answers[1]).toHaveLength(6);
    expect(answers[2]).toHaveLength(12);
    expect(answers[3]).toBe(1);
  });
});
