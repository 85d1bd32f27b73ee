import { describe, expect, it } from "vitest";
import { DEATH_WINDOW_MS, HEALTHY_UPTIME_MS, MAX_DEATHS, RestartPolicy } from "./restart-policy.js";

/** The delays before replacements of processes that died `uptimeMs` after listening, deaths `everyMs` apart. */
function delays(policy: RestartPolicy, deaths: number, everyMs: number, uptimeMs: number, from = 0) {
  return Array.from({ length: deaths }, (_, index) => policy.afterDeath(from + index * everyMs, uptimeMs));
}

describe("RestartPolicy (WEB_CONCURRENCY replacements)", () => {
  it("doubles the delay from 100 ms to 5 s while processes die soon after they listen", () => {
    // Deaths a window apart: the crash-loop stop never applies.
    expect(delays(new RestartPolicy(), 9, DEATH_WINDOW_MS, 1_000)).toEqual([
      100, 200, 400, 800, 1600, 3200, 5000, 5000, 5000,
    ]);
  });

  it("starts again from 100 ms after a process that stayed up a while", () => {
    const policy = new RestartPolicy();
    expect(delays(policy, 3, DEATH_WINDOW_MS, 1_000)).toEqual([100, 200, 400]);
    expect(policy.afterDeath(10 * DEATH_WINDOW_MS, HEALTHY_UPTIME_MS)).toBe(100);
    expect(policy.afterDeath(11 * DEATH_WINDOW_MS, 1_000)).toBe(200);
  });

  it(`stops at the ${MAX_DEATHS}th death within the window, and forgets deaths older than it`, () => {
    const spaced = new RestartPolicy();
    expect(delays(spaced, MAX_DEATHS - 1, 1_000, 1_000)).not.toContain(null);
    // The first death left the window just before the next one.
    expect(spaced.afterDeath(DEATH_WINDOW_MS, 1_000)).not.toBeNull();
    expect(spaced.afterDeath(DEATH_WINDOW_MS + 1_000, 1_000)).not.toBeNull();

    const looping = new RestartPolicy();
    expect(delays(looping, MAX_DEATHS, 1_000, 1_000).at(-1)).toBeNull();
    // Healthy processes dying that fast count too: that is no better than a crash loop.
    const healthy = new RestartPolicy();
    expect(delays(healthy, MAX_DEATHS, 1_000, HEALTHY_UPTIME_MS).at(-1)).toBeNull();
  });
});
