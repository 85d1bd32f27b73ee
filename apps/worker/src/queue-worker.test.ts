import { bullPrefix } from "@outcomes/queue";
import { createLogger } from "@outcomes/runtime";
import { testRedis, testRedisPrefix } from "@outcomes/testkit/databases";
import { Queue } from "bullmq";
import { afterAll, beforeAll, describe, expect, expectTypeOf, it, vi } from "vitest";
import type { RunningRole } from "./context.js";
import { type JobHandlers, startQueueWorker } from "./queue-worker.js";

const prefix = bullPrefix(testRedisPrefix());
const lines: Array<Record<string, any>> = [];
const logger = createLogger("info", "queue-worker-test", { write: (line: string) => lines.push(JSON.parse(line)) });
const connection = testRedis();
const queue = new Queue("blocks", { connection, prefix });
const generate = vi.fn(async (payload: { gameId: number }) => ({ filled: payload.gameId }));
let worker: RunningRole;

beforeAll(() => {
  worker = startQueueWorker(
    "blocks",
    { "blocks.generate": generate, "blocks.reveal": async () => ({}) },
    {
      newConnection: testRedis,
      bullPrefix: prefix,
      logger,
      env: { WORKER_JOB_LOCK_MS: 30_000 },
      concurrency: 1,
      logFailures: true,
    },
  );
});
afterAll(async () => {
  await worker.close();
  await queue.obliterate({ force: true });
  await queue.close();
  await connection.quit();
});

/** Adds a job straight to the queue, past the producers' own check, and waits for it to finish. */
async function run(name: string, data: unknown, attempts = 3) {
  const job = await queue.add(name, data, { attempts });
  await vi.waitFor(async () => expect(["completed", "failed"]).toContain(await queue.getJobState(job.id!)), {
    timeout: 10_000,
    interval: 25,
  });
  const finished = await queue.getJob(job.id!);
  return { job: finished!, logged: () => lines.filter((line) => line.jobId === job.id) };
}

/** The `failed` event is logged just after the job is marked failed in Redis. */
async function expectLogged(logged: () => unknown[], expected: unknown[]) {
  await vi.waitFor(() => expect(logged()).toEqual(expected), { timeout: 2000, interval: 10 });
}

describe("startQueueWorker", () => {
  it("hands a job its payload parsed with the catalog's schema", async () => {
    generate.mockClear();
    const { job, logged } = await run("blocks.generate", { gameId: 7, unknownField: "dropped" });
    expect(await job.getState()).toBe("completed");
    expect(job.returnvalue).toEqual({ filled: 7 });
    expect(generate).toHaveBeenCalledOnce();
    expect(generate.mock.calls[0]?.[0]).toEqual({ gameId: 7 });
    expect(logged()).toEqual([]);
  });

  it("fails a job whose payload does not parse, once, without calling its handler", async () => {
    generate.mockClear();
    const { job, logged } = await run("blocks.generate", { gameId: "seven" });
    expect(await job.getState()).toBe("failed");
    expect(job.attemptsMade).toBe(1);
    expect(job.failedReason).toMatch(/^Invalid blocks\.generate payload: /);
    expect(generate).not.toHaveBeenCalled();
    await expectLogged(logged, [
      expect.objectContaining({ level: 50, msg: "blocks.generate failed", err: expect.anything() }),
    ]);
  });

  it("fails a job of a name its queue does not carry, once", async () => {
    generate.mockClear();
    for (const name of ["webhook.deliver", "blocks.unknown", "constructor"]) {
      const { job, logged } = await run(name, { gameId: 7 });
      expect(await job.getState()).toBe("failed");
      expect(job.attemptsMade).toBe(1);
      expect(job.failedReason).toBe(`Unknown job ${name} on the blocks queue`);
      await expectLogged(logged, [expect.objectContaining({ level: 50, msg: `${name} failed` })]);
    }
    expect(generate).not.toHaveBeenCalled();
  });

  it("retries a handler's failure by the job's options, logging each attempt with its payload", async () => {
    generate.mockClear();
    const away = new Error("Postgres away");
    generate.mockRejectedValueOnce(away).mockRejectedValueOnce(away);
    const { job, logged } = await run("blocks.generate", { gameId: 9 }, 2);
    expect(await job.getState()).toBe("failed");
    expect(job.attemptsMade).toBe(2);
    expect(generate).toHaveBeenCalledTimes(2);
    const attempt = expect.objectContaining({ level: 50, msg: "blocks.generate failed", gameId: 9 });
    await expectLogged(logged, [attempt, attempt]);
  });

  it("needs a handler for every job of the queue, and only those (checked by tsc -b)", () => {
    const rollup = async () => ({});
    const settlements: JobHandlers<"settlements"> = { "settlement.generate": rollup, "settlement.rollup": rollup };
    // @ts-expect-error: settlement.rollup has no handler
    const missing: JobHandlers<"settlements"> = { "settlement.generate": rollup };
    // @ts-expect-error: blocks.generate is a job of another queue
    const foreign: JobHandlers<"settlements"> = { ...settlements, "blocks.generate": rollup };
    expectTypeOf<Parameters<JobHandlers<"blocks">["blocks.generate"]>[0]>().toEqualTypeOf<{ gameId: number }>();
    expectTypeOf<keyof JobHandlers<"key-expiry">>().toEqualTypeOf<"key-expiry.sweep" | "partitions.maintain">();
    expect([missing, foreign]).toHaveLength(2);
  });
});
