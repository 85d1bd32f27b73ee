import { SAMPLE_PAR_SHEET } from "@outcomes/core";
import { bullPrefix } from "@outcomes/queue";
import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import { cliAgainst, errorCode } from "@outcomes/testkit/cli";
import { testRedis } from "@outcomes/testkit/databases";
import { registerTestGame } from "@outcomes/testkit/games";
import { Queue } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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

// The same settings as the API (the reserve report shows BLOCK_SIZE).
const { cli, cliJson } = cliAgainst(() => api, { BLOCK_SIZE: "100" });

describe("sheets", () => {
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

    const approved = await cliJson("sheets", "approve", upload.body.id);
    expect(approved).toMatchObject({ id: upload.body.id, status: "ACTIVE", environment: "production" });
    expect((await register()).status).toBe(201);

    const retired = await cli("sheets", "retire", upload.body.id);
    expect(retired.stdout).toMatch(/status\s+RETIRED/);
    expect(errorCode(await cli("par-sheets", "approve", upload.body.id))).toEqual([1, "error KS-4208"]);
    expect(errorCode(await cli("sheets", "retire", "par_unknown"))).toEqual([1, "error KS-4205"]);
  });
});

describe("sheets list", () => {
  it("lists every partner's sheets with filters, as the partner API shows them", async () => {
    const production = await api.createPartner({ environment: "production" });
    const upload = (apiKey: string) =>
      api.request("/api/partner/v1/par-sheets", { method: "POST", apiKey, json: SAMPLE_PAR_SHEET });
    const pending = (await upload(production.apiKey)).body;
    const sandbox = await api.createPartner();
    const active = (await upload(sandbox.apiKey)).body;

    const queue = await cliJson("sheets", "list", "--status", "PENDING_APPROVAL", "--limit", "100");
    expect(queue.parSheets.map((sheet: { id: string }) => sheet.id)).toContain(pending.id);
    expect(queue.parSheets.every((sheet: { status: string }) => sheet.status === "PENDING_APPROVAL")).toBe(true);
    const mine = await cliJson("sheets", "list", "--partner", sandbox.partnerId);
    expect(mine).toMatchObject({ page: 1, limit: 20, total: 1 });
    const fromApi = await api.request("/api/partner/v1/par-sheets", { apiKey: sandbox.apiKey });
    expect(fromApi.body.parSheets.map((sheet: { id: string }) => sheet.id)).toEqual([active.id]);
    expect(mine.parSheets).toEqual([
      { ...fromApi.body.parSheets[0], partnerId: sandbox.partnerId, environment: "sandbox" },
    ]);
    const none = await cliJson("sheets", "list", "--partner", sandbox.partnerId, "--environment", "production");
    expect([none.total, none.parSheets]).toEqual([0, []]);

    const table = await cli("sheets", "list", "--partner", production.partnerId);
    expect(table.stdout).toMatch(/^ID\s+NAME\s+VERSION\s+STATUS\s+RTP\s+PARTNER\s+ENVIRONMENT\s+CREATED AT\n/);
    expect(table.stdout).toMatch(new RegExp(`${pending.id}\\s.*PENDING_APPROVAL`));
    expect(table.stdout).toContain("page 1 of 1, 1 shown, 1 in total");
    expect((await cli("sheets", "list", "--status", "GONE")).code).toBe(1);
  });
});

describe("settlements", () => {
  it("generates, refuses what the API refuses, and reissues a disputed report as PENDING", async () => {
    const game = await registerTestGame(api, { fill: false });
    // Yesterday's report is final (a day that has not ended is provisional: KS-4305 on dispute).
    const day = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    const generated = await cliJson(
      "settlements",
      "generate",
      game.partnerId,
      "--report-date",
      day,
      "--environment",
      "sandbox",
    );
    expect(generated).toMatchObject({
      reportDate: day,
      status: "GENERATED",
      provisional: false,
      totalSpins: 0,
      rtp: null,
      exact: { totalWageredUsd: "0", netUsd: "0" },
      figuresExact: true,
    });
    const fromApi = await api.request(`/api/partner/v1/settlements/${day}`, { apiKey: game.apiKey });
    expect(fromApi.body).toEqual(generated);

    const other = await api.createPartner();
    const cases: Array<[string[], string]> = [
      [
        ["settlements", "generate", game.partnerId, "--report-date", "2024-13-01", "--environment", "sandbox"],
        "KS-4105",
      ],
      [["settlements", "generate", other.partnerId, "--report-date", day, "--environment", "sandbox"], "KS-4214"],
      [["settlements", "generate", "ptr_unknown", "--report-date", day, "--environment", "sandbox"], "KS-4209"],
      [["settlements", "reissue", game.partnerId, day, "--environment", "sandbox"], "KS-4304"],
      [["settlements", "reissue", game.partnerId, "2020-01-01", "--environment", "sandbox"], "KS-4301"],
    ];
    for (const [argv, code] of cases) expect(errorCode(await cli(...argv))).toEqual([1, `error ${code}`]);

    const disputed = await api.request(`/api/partner/v1/settlements/${day}/dispute`, {
      method: "POST",
      apiKey: game.apiKey,
      json: { reason: "figures differ" },
    });
    expect(disputed.body.status).toBe("disputed");
    const regenerate = ["settlements", "generate", game.partnerId, "--report-date", day, "--environment", "sandbox"];
    expect(errorCode(await cli(...regenerate))).toEqual([1, "error KS-4304"]);
    const reissued = await cliJson("settlements", "reissue", game.partnerId, day, "--environment", "sandbox");
    expect(reissued).toMatchObject({ reportDate: day, status: "PENDING" });

    const listed = await cliJson("settlements", "list", game.partnerId, "--environment", "sandbox");
    const listedByApi = await api.request("/api/partner/v1/settlements", { apiKey: game.apiKey });
    expect(listed).toEqual(listedByApi.body);
    expect(listed.reports.map((report: { status: string }) => report.status)).toEqual(["PENDING"]);
    const table = await cli("settlements", "list", game.partnerId, "--environment", "sandbox");
    expect(table.stdout).toMatch(new RegExp(`^REPORT DATE.*\\n${day}\\s+PENDING\\s+0\\s.*\\sfalse\\n`));
    const production = await cliJson("settlements", "list", game.partnerId, "--environment", "production");
    expect(production.total).toBe(0);
    expect(errorCode(await cli("settlements", "list", "ptr_unknown", "--environment", "sandbox"))).toEqual([
      1,
      "error KS-4209",
    ]);
  });
});

describe("jobs", () => {
  it("queues the same jobs as POST /jobs/settlements/run and /jobs/key-expiry/run", async () => {
    const connection = testRedis();
    const prefix = bullPrefix(api.redisPrefix);
    const settlements = new Queue("settlements", { connection, prefix });
    const keyExpiry = new Queue("key-expiry", { connection, prefix });
    try {
      const dated = await cliJson("jobs", "run", "settlements", "--report-date", "2024-02-29");
      const job = await settlements.getJob(dated.jobId);
      expect([job?.name, job?.data]).toEqual(["settlement.generate", { reportDate: "2024-02-29" }]);
      const sweep = await cli("jobs", "run", "key-expiry");
      const jobId = /job (\S+)\)/.exec(sweep.stdout)?.[1] ?? "";
      expect((await keyExpiry.getJob(jobId))?.name).toBe("key-expiry.sweep");
      const partitions = await cliJson("jobs", "run", "partitions");
      expect((await keyExpiry.getJob(partitions.jobId))?.name).toBe("partitions.maintain");
      expect(errorCode(await cli("jobs", "run", "settlements", "--report-date", "2024-02-30"))).toEqual([
        1,
        "error KS-4105",
      ]);
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

describe("games refill", () => {
  it("queues the game's one generation job (de-duplicated like every trigger); unknown game KS-4201", async () => {
    const game = await registerTestGame(api, { fill: false });
    const connection = testRedis();
    const blocks = new Queue("blocks", { connection, prefix: bullPrefix(api.redisPrefix) });
    try {
      const first = await cliJson("games", "refill", String(game.gameId));
      expect(first.reserve).toMatchObject({ gameId: game.gameId, readyBlocks: 0, lowReserve: true });
      const job = await blocks.getJob(first.jobId);
      expect([job?.name, job?.data]).toEqual(["blocks.generate", { gameId: game.gameId }]);
      const again = await cli("games", "refill", String(game.gameId));
      expect(again.stdout).toContain(`Queued blocks.generate (job ${first.jobId})`);
      expect(errorCode(await cli("games", "refill", "999999999"))).toEqual([1, "error KS-4201"]);
      expect(errorCode(await cli("games", "refill", "0"))).toEqual([1, "error KS-4201"]);
    } finally {
      await blocks.close();
      connection.disconnect();
    }
  });
});

describe("--help", () => {
  it.each([
    "sheets",
    "sheets list",
    "sheets approve",
    "sheets retire",
    "settlements",
    "settlements generate",
    "settlements reissue",
    "settlements list",
    "jobs",
    "jobs run",
    "jobs run settlements",
    "jobs run key-expiry",
    "jobs run partitions",
    "games",
    "games reserve",
    "games refill",
    "deliveries",
    "deliveries list",
    "deliveries replay",
    "spins",
    "spins get",
    "spins replay-link",
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
