import { CURRENT_RELEASE } from "@outcomes/core";
import { RolloutSwitch, releaseRollouts } from "@outcomes/db";
import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import { cliAgainst } from "@outcomes/testkit/cli";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * The rollout switch (docs/upgrades.md): off until the rollout's last step, then on for every
 * process within 1 s: the one that took the step at once, another API process on its pub/sub
 * notice, anything else on its next read.
 */
let first: TestApi;
let second: TestApi;
beforeAll(async () => {
  first = await startTestApi({}, { rollout: "running" });
  second = await startTestApi({}, { shareWith: first });
});
afterAll(async () => {
  await second.close();
  await first.close();
});

const { cliJson } = cliAgainst(() => first);
const state = () => first.request("/api/admin/v1/release", { admin: true });
const finish = () => first.request("/api/admin/v1/release/finish", { method: "POST", admin: true });

describe("the rollout of this release", () => {
  it("is not finished at first: every process says so, and the CLI too", async () => {
    const response = await state();
    expect([response.status, response.body]).toEqual([
      200,
      { release: CURRENT_RELEASE, rolloutFinished: false, finishedAt: null },
    ]);
    expect(await cliJson("release", "status")).toEqual({
      release: CURRENT_RELEASE,
      rolloutFinished: false,
      finishedAt: null,
    });
    expect(await first.deps.rollout.finished(CURRENT_RELEASE)).toBe(false);
    expect(await second.deps.rollout.finished(CURRENT_RELEASE)).toBe(false);
  });

  it("is finished by its last step, at once where it was taken and within 1 s on another process", async () => {
    // Both processes have just read "not finished": only the notice can make the second see it sooner than 1 s.
    const otherProcess = new RolloutSwitch(first.deps.db);
    expect(await otherProcess.finished(CURRENT_RELEASE)).toBe(false);
    expect(await second.deps.rollout.finished(CURRENT_RELEASE)).toBe(false);
    const finishedAt = Date.now();
    const finished = await finish();
    expect(finished.status).toBe(200);
    expect(finished.body).toMatchObject({ release: CURRENT_RELEASE, rolloutFinished: true });
    expect(Date.parse(finished.body.finishedAt)).toBeGreaterThan(finishedAt - 5_000);
    expect(await first.deps.rollout.finished(CURRENT_RELEASE)).toBe(true);

    let seen = false;
    while (!seen && Date.now() - finishedAt < 2_000) {
      await new Promise((resolve) => setTimeout(resolve, 5));
      seen = await second.deps.rollout.finished(CURRENT_RELEASE);
    }
    expect(seen).toBe(true);
    expect(Date.now() - finishedAt).toBeLessThan(1_000);
    // A process without the notice (a worker) reads it once its second is up, and earlier releases count as finished.
    expect(await otherProcess.finished(CURRENT_RELEASE, Date.now())).toBe(false);
    expect(await otherProcess.finished(CURRENT_RELEASE, Date.now() + 1_000)).toBe(true);
    expect(await otherProcess.finished(CURRENT_RELEASE - 1)).toBe(true);
    expect(await otherProcess.finished(CURRENT_RELEASE + 1)).toBe(false);
    expect((await state()).body).toEqual(finished.body);
  });

  it("keeps its first time when the step is repeated, from the API or the CLI", async () => {
    const before = (await state()).body;
    expect((await finish()).body).toEqual(before);
    expect(await cliJson("release", "finish")).toEqual(before);
    const rows = await first.deps.db.select().from(releaseRollouts);
    expect(rows.map((row) => row.release)).toEqual([CURRENT_RELEASE]);
  });

  it("needs the operator token", async () => {
    const response = await first.request("/api/admin/v1/release/finish", { method: "POST" });
    expect([response.status, response.body.errorCode]).toEqual([401, "KS-4001"]);
  });
});
