import { SAMPLE_PAR_SHEET } from "@outcomes/core";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApi, type TestApi } from "../../api/src/testing.js";
import { registerTestGame } from "../../api/src/testing-games.js";
import { run } from "./program.js";

/**
 * The operator commands beyond partners, keys and maintenance (CONTRACT §3: "an operator CLI does
 * the same things" as the operator API), run in-process against a real API's database and Redis
 * prefix, each checked against what the API then shows.
 */
let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({ BLOCK_SIZE: "100" });
});
afterAll(async () => {
  await api.close();
});

async function cli(...argv: string[]) {
  let stdout = "";
  let stderr = "";
  // The same settings as the API (the reserve report shows BLOCK_SIZE).
  const env = {
    DATABASE_URL: api.database.url,
    REDIS_URL: process.env.REDIS_URL,
    REDIS_PREFIX: api.redisPrefix,
    BLOCK_SIZE: "100",
  };
  const code = await run(argv, {
    env,
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
  });
  return { code, stdout, stderr };
}
async function cliJson(...argv: string[]) {
  const result = await cli(...argv, "--json");
  expect(result.stderr).toBe("");
  expect(result.code).toBe(0);
  return JSON.parse(result.stdout);
}
const errorCode = (result: { code: number; stderr: string }) => [result.code, result.stderr.split(":")[0]];

describe("par-sheets", () => {
  it("approves a production sheet so a game can be registered from it, and retires it", async () => {
    const partner = await api.createPartner({ environment: "production" });
    const upload = await api.request("/api/partner/v1/par-sheets", {
      method: "POST",
      apiKey: partner.apiKey,
      json: SAMPLE_PAR_SHEET,
    });
    expect(upload.body.status).toBe("PENDING_APPROVAL");
    const register = () =>
      api.request("/api/partner/v1/games", {
        method: "POST",
        apiKey: partner.apiKey,
        json: { parSheetId: upload.body.id, name: `g-${upload.body.id}`, maxWagerUsd: 5 },
      });
    expect((await register()).body.errorCode).toBe("KS-4208");

    const approved = await cliJson("par-sheets", "approve", upload.body.id);
    expect(approved).toMatchObject({ id: upload.body.id, status: "ACTIVE", environment: "production" });
    expect((await register()).status).toBe(201);

    const retired = await cli("par-sheets", "retire", upload.body.id);
    expect(retired.stdout).toMatch(/status\s+RETIRED/);
    expect(errorCode(await cli("par-sheets", "approve", upload.body.id))).toEqual([1, "error KS-4208"]);
    expect(errorCode(await cli("par-sheets", "retire", "par_unknown"))).toEqual([1, "error KS-4205"]);
  });
});

describe("settlements", () => {
  it("generates, refuses what the API refuses, and reissues a disputed report as PENDING", async () => {
    const game = await registerTestGame(api, { fill: false });
    const today = new Date().toISOString().slice(0, 10);
    const generated = await cliJson(
      "settlements",
      "generate",
      game.partnerId,
      "--date",
      today,
      "--environment",
      "sandbox",
    );
    expect(generated).toMatchObject({ reportDate: today, status: "GENERATED", totalSpins: 0, rtp: null });
    const fromApi = await api.request(`/api/partner/v1/settlements/${today}`, { apiKey: game.apiKey });
    expect(fromApi.body).toEqual(generated);

    const other = await api.createPartner();
    const cases: Array<[string[], string]> = [
      [["settlements", "generate", game.partnerId, "--date", "2024-13-01", "--environment", "sandbox"], "KS-4105"],
      [["settlements", "generate", other.partnerId, "--date", today, "--environment", "sandbox"], "KS-4214"],
      [["settlements", "generate", "ptr_unknown", "--date", today, "--environment", "sandbox"], "KS-4209"],
      [["settlements", "reissue", game.partnerId, today, "--environment", "sandbox"], "KS-4304"],
      [["settlements", "reissue", game.partnerId, "2020-01-01", "--environment", "sandbox"], "KS-4301"],
    ];
    for (const [argv, code] of cases) expect(errorCode(await cli(...argv))).toEqual([1, `error ${code}`]);

    const disputed = await api.request(`/api/partner/v1/settlements/${today}/dispute`, {
      method: "POST",
      apiKey: game.apiKey,
      json: { reason: "figures differ" },
    });
    expect(disputed.body.status).toBe("disputed");
    const regenerate = ["settlements", "generate", game.partnerId, "--date", today, "--environment", "sandbox"];
    expect(errorCode(await cli(...regenerate))).toEqual([1, "error KS-4304"]);
    const reissued = await cliJson("settlements", "reissue", game.partnerId, today, "--environment", "sandbox");
    expect(reissued).toMatchObject({ reportDate: today, status: "PENDING" });
  });
});

describe("jobs", () => {
  it("queues the same jobs as POST /jobs/settlements/run and /jobs/key-expiry/run", async () => {
    const connection = new Redis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379");
    const prefix = `${api.redisPrefix}:bull`;
    const settlements = new Queue("settlements", { connection, prefix });
    const keyExpiry = new Queue("key-expiry", { connection, prefix });
    try {
      const dated = await cliJson("jobs", "settlements", "--date", "2024-02-29");
      const job = await settlements.getJob(dated.jobId);
      expect([job?.name, job?.data]).toEqual(["settlement.generate", { reportDate: "2024-02-29" }]);
      const sweep = await cli("jobs", "key-expiry");
      const jobId = /job (\S+)\)/.exec(sweep.stdout)?.[1] ?? "";
      expect((await keyExpiry.getJob(jobId))?.name).toBe("key-expiry.sweep");
      expect(errorCode(await cli("jobs", "settlements", "--date", "2024-02-30"))).toEqual([1, "error KS-4105"]);
    } finally {
      await Promise.all([settlements.close(), keyExpiry.close()]);
      connection.disconnect();
    }
  });
});

describe("games reserve", () => {
  it("shows what GET /games/{gameId}/reserve shows; unknown game KS-4201", async () => {
    const game = await registerTestGame(api);
    const fromApi = await api.request(`/api/admin/v1/games/${game.gameId}/reserve`, { admin: true });
    expect(await cliJson("games", "reserve", String(game.gameId))).toEqual(fromApi.body);
    expect(errorCode(await cli("games", "reserve", "999999999"))).toEqual([1, "error KS-4201"]);
    expect(errorCode(await cli("games", "reserve", "abc"))).toEqual([1, "error KS-4201"]);
  });
});

describe("--help", () => {
  it.each([
    "par-sheets approve",
    "par-sheets retire",
    "settlements generate",
    "settlements reissue",
    "jobs settlements",
    "jobs key-expiry",
    "games reserve",
  ])("works on %j without touching the services", async (path) => {
    let stdout = "";
    const code = await run([...path.split(" "), "--help"], {
      env: { DATABASE_URL: "postgres://nobody@127.0.0.1:1/none", REDIS_URL: "redis://127.0.0.1:1" },
      stdout: (text) => {
        stdout += text;
      },
      stderr: (text) => expect.fail(text),
    });
    expect([code, stdout.includes(`Usage: npm run cli -- ${path}`)]).toEqual([0, true]);
  });
});
