import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api.close();
});

type Scripted = { gcra(key: string, limit: number): Promise<number[]>; spinTake(...keys: unknown[]): Promise<unknown> };

describe("the request path's Redis scripts", () => {
  it("are defined before the first request, so their first calls can share an auto-pipeline", async () => {
    // A command defined while the tick's pipeline already gathers others is missing from it, which
    // fails that call and throws inside ioredis (redis/ioredis#1931): the first spin of a fresh
    // process next to other traffic crashed it. Here, with no request served yet, all go in one tick.
    const redis = api.deps.redis as typeof api.deps.redis & Scripted;
    const { keys } = api.deps;
    // The service's own key names: on a cluster the script's two keys must share a hash slot.
    const owner = { partnerId: "ptr_probe", environment: "sandbox" };
    const answers = await Promise.all([
      redis.get(keys.maintenance),
      redis.gcra(keys.rateLimit("requests", owner.partnerId, owner.environment), 10),
      redis.spinTake(
        keys.rateLimit("spins", owner.partnerId, owner.environment),
        keys.outcomeQueue({ id: 1, ...owner }),
        10,
      ),
    ]);
    expect(answers[1]).toHaveLength(4);
    expect(answers[2]).toHaveLength(6);
  });
});
