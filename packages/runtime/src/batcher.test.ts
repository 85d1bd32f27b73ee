import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { Batcher } from "./batcher.js";

/** A batcher whose runs are recorded and, while `hold` is set, held open until released. */
function recording(options: { maxSize?: number; keyed?: boolean; gatherMs?: number } = {}) {
  const runs: string[][] = [];
  const held: Array<() => void> = [];
  let hold = false;
  const batcher = new Batcher<string, string>({
    maxSize: options.maxSize ?? 100,
    keyOf: options.keyed ? (input) => input.split(":")[0] ?? null : undefined,
    gatherWhileRunning: options.gatherMs === undefined ? undefined : { maxWaitMs: options.gatherMs },
    run: async (inputs) => {
      runs.push(inputs);
      if (hold) await new Promise<void>((resolve) => held.push(resolve));
      return inputs.map((input) => (input.endsWith("!") ? new Error(`refused ${input}`) : `done ${input}`));
    },
  });
  return {
    batcher,
    runs,
    holdRuns: () => (hold = true),
    releaseRuns: () => {
      hold = false;
      for (const release of held.splice(0)) release();
    },
  };
}

describe("Batcher", () => {
  it("runs the inputs of one turn together and answers each its own, an Error its input alone", async () => {
    const { batcher, runs } = recording();
    const answers = await Promise.allSettled(["a", "b!", "c"].map((input) => batcher.submit(input)));
    expect(runs).toEqual([["a", "b!", "c"]]);
    expect(answers.map((answer) => (answer.status === "fulfilled" ? answer.value : String(answer.reason)))).toEqual([
      "done a",
      "Error: refused b!",
      "done c",
    ]);
  });

  it("sends a full batch at once and starts the next", async () => {
    const { batcher, runs } = recording({ maxSize: 2 });
    await Promise.all(["a", "b", "c"].map((input) => batcher.submit(input)));
    expect(runs).toEqual([["a", "b"], ["c"]]);
  });

  it("never puts two inputs with one key in the same batch", async () => {
    const { batcher, runs } = recording({ keyed: true });
    await Promise.all(["k1:a", "k2:b", "k1:c", "k1:d"].map((input) => batcher.submit(input)));
    expect(runs).toEqual([["k1:a", "k2:b"], ["k1:c"], ["k1:d"]]);
  });

  it("rejects every input of a run that throws", async () => {
    const batcher = new Batcher<string, string>({
      maxSize: 10,
      run: async () => {
        throw new Error("connection lost");
      },
    });
    const answers = await Promise.allSettled(["a", "b"].map((input) => batcher.submit(input)));
    expect(answers.map((answer) => answer.status)).toEqual(["rejected", "rejected"]);
  });

  it("gathers behind a running batch until it ends, then sends what gathered as one", async () => {
    const { batcher, runs, holdRuns, releaseRuns } = recording({ gatherMs: 1000 });
    holdRuns();
    const first = batcher.submit("a");
    await sleep(5);
    const later = ["b", "c"].map((input) => batcher.submit(input));
    await sleep(20);
    expect(runs).toEqual([["a"]]);
    releaseRuns();
    await Promise.all([first, ...later]);
    expect(runs).toEqual([["a"], ["b", "c"]]);
  });

  it("sends a gathering batch after maxWaitMs even while another still runs", async () => {
    const { batcher, runs, holdRuns, releaseRuns } = recording({ gatherMs: 30 });
    holdRuns();
    const first = batcher.submit("a");
    await sleep(5);
    const second = batcher.submit("b");
    await sleep(100);
    expect(runs).toEqual([["a"], ["b"]]);
    releaseRuns();
    await Promise.all([first, second]);
  });
});
