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
    // The service's own key names: on a cluster a script's keys must share a hash slot. Several
    // partners, so their slots fall on several masters: a script whose first argument is its key
    // count must still reach its keys' master, not the one of that number's slot (redis/ioredis#2109).
    const owners = Array.from({ length: 6 }, (_, n) => ({ partnerId: `ptr_probe${n}`, environment: "sandbox" }));
    const perOwner = owners.map((owner) => {
      const queue = keys.outcomeQueue({ id: 1, ...owner });
      const bucket = (name: string) => keys.rateLimit(name, owner.partnerId, owner.environment);
      return [
        redis.draws(2, bucket("default"), queue, 10, 0),
        redis.draws(4, bucket("spin"), queue, bucket("spin"), queue, 10, 1, 10, 1),
        redis.giveBack(queue, keys.outcomesRetired({ id: 1, ...owner }, 1), "item"),
      ] as const;
    });
    const [, ...answers] = await Promise.all([redis.get(keys.maintenance), ...perOwner.flat()]);
    for (let n = 0; n < owners.length; n++) {
      expect(answers[3 * n]).toHaveLength(6);
      expect(answers[3 * n + 1]).toHaveLength(12);
      expect(answers[3 * n + 2]).toBe(1);
    }
  });
});
