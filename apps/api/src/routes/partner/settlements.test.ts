import { testApiForFile } from "@outcomes/testkit/file-fixture";
import {
  at,
  operatorGenerate,
  operatorReissue,
  type SettlementWorld,
  settlementWorld,
} from "@outcomes/testkit/settlements";
import { describe, expect, it } from "vitest";

const api = testApiForFile();

const BASE = "/api/partner/v1/settlements";

/** A partner with one GENERATED report of `reportDate` (one spin of 2 USD). */
async function withReport(reportDate: string, environment: "sandbox" | "production" = "sandbox") {
  const world = await settlementWorld(api, environment, 1);
  await world.addSpins([
    {
      gameId: world.fixture.gameIds[0]!,
      wagerMicros: 2_000_000,
      payoutMicros: 1_000_000,
      createdAt: at(`${reportDate}T12:00:00.000Z`),
    },
  ]);
  const generated = await operatorGenerate(api, world.partnerId, { reportDate, environment });
  expect(generated.status).toBe(201);
  return world;
}

const acknowledge = (world: SettlementWorld, date: string) =>
  api.request(`${BASE}/${date}/acknowledge`, { method: "POST", apiKey: world.apiKey });
const dispute = (world: SettlementWorld, date: string, json: unknown = { reason: "Totals differ" }) =>
  api.request(`${BASE}/${date}/dispute`, { method: "POST", apiKey: world.apiKey, json });
const get = (world: SettlementWorld, date: string) => api.request(`${BASE}/${date}`, { apiKey: world.apiKey });
const codeOf = (response: { status: number; body: any }) => [response.status, response.body.errorCode];

describe("state table over HTTP", () => {
  it("GENERATED + acknowledge → acknowledged; then acknowledge or dispute → 409 KS-4302", async () => {
    const world = await withReport("2026-03-02");
    const ack = await acknowledge(world, "2026-03-02");
    expect(ack.status).toBe(200);
    expect(ack.body).toMatchObject({ reportDate: "2026-03-02", status: "acknowledged", totalSpins: 1, netUsd: 1 });
    expect(Date.parse(ack.body.acknowledgedAt)).toBeGreaterThan(0);
    expect(codeOf(await acknowledge(world, "2026-03-02"))).toEqual([409, "KS-4302"]);
    expect(codeOf(await dispute(world, "2026-03-02"))).toEqual([409, "KS-4302"]);
    expect(codeOf(await dispute(world, "2026-03-02", {}))).toEqual([409, "KS-4302"]);
    expect((await get(world, "2026-03-02")).body).toEqual(ack.body);
  });

  it("GENERATED + dispute with reason → disputed; then dispute → KS-4303, acknowledge → KS-4304", async () => {
    const world = await withReport("2026-03-03");
    const disputed = await dispute(world, "2026-03-03", { reason: "  Wagers are 3 USD short  " });
    expect(disputed.status).toBe(200);
    expect(disputed.body).toMatchObject({
      status: "disputed",
      disputeReason: "Wagers are 3 USD short",
      acknowledgedAt: null,
    });
    expect(Date.parse(disputed.body.disputedAt)).toBeGreaterThan(0);
    expect(codeOf(await dispute(world, "2026-03-03", { reason: "again" }))).toEqual([409, "KS-4303"]);
    expect(codeOf(await acknowledge(world, "2026-03-03"))).toEqual([409, "KS-4304"]);
    expect((await get(world, "2026-03-03")).body).toEqual(disputed.body);
  });

  it("PENDING (after reissue) + dispute → disputed, and PENDING + acknowledge → acknowledged", async () => {
    const world = await withReport("2026-03-04");
    await dispute(world, "2026-03-04");
    expect((await operatorReissue(api, world.partnerId, "2026-03-04", { environment: "sandbox" })).body.status).toBe(
      "PENDING",
    );
    const second = await dispute(world, "2026-03-04", { reason: "Still short" });
    expect(second.body).toMatchObject({ status: "disputed", disputeReason: "Still short" });
    await operatorReissue(api, world.partnerId, "2026-03-04", { environment: "sandbox" });
    const ack = await acknowledge(world, "2026-03-04");
    expect(ack.body.status).toBe("acknowledged");
  });

  it("dispute without a reason is 400 KS-4102 (missing, null, empty, blank); a non-string KS-4101; nothing changes", async () => {
    const world = await withReport("2026-03-05");
    for (const body of [{}, { reason: null }, { reason: "" }, { reason: "   " }]) {
      expect(codeOf(await dispute(world, "2026-03-05", body)), JSON.stringify(body)).toEqual([400, "KS-4102"]);
    }
    const noBody = await api.request(`${BASE}/2026-03-05/dispute`, { method: "POST", apiKey: world.apiKey });
    expect(codeOf(noBody)).toEqual([400, "KS-4102"]);
    expect(codeOf(await dispute(world, "2026-03-05", { reason: 12 }))).toEqual([400, "KS-4101"]);
    expect(codeOf(await dispute(world, "2026-03-05", { reason: "x".repeat(2001) }))).toEqual([400, "KS-4101"]);
    expect((await get(world, "2026-03-05")).body.status).toBe("GENERATED");
  });

  it("lets exactly one of a concurrent acknowledge and dispute win", async () => {
    const world = await withReport("2026-03-06");
    // Hold the report's row lock while both requests arrive, so they really overlap: each reads the
    // report only once the lock is free, and the second must see the first one's status.
    let both: Promise<Array<{ status: number; body: any }>> | undefined;
    await api.database.sql.begin(async (tx) => {
      await tx`select id from settlement_reports where partner_id = ${world.partnerId} for update`;
      both = Promise.all([acknowledge(world, "2026-03-06"), dispute(world, "2026-03-06")]);
      await new Promise((resolve) => setTimeout(resolve, 300));
    });
    const [ack, disp] = (await both!) as [{ status: number; body: any }, { status: number; body: any }];
    const statuses = [ack.status, disp.status].sort();
    expect(statuses).toEqual([200, 409]);
    const final = (await get(world, "2026-03-06")).body.status;
    expect(final).toBe(ack.status === 200 ? "acknowledged" : "disputed");
    expect(ack.status === 200 ? disp.body.errorCode : ack.body.errorCode).toBe(
      ack.status === 200 ? "KS-4302" : "KS-4304",
    );
  });
});

describe("unknown reports and dates", () => {
  it("answers KS-4301 for an unknown date and for another environment's or partner's report", async () => {
    const world = await withReport("2026-03-07", "production");
    expect(codeOf(await get(world, "2026-03-08"))).toEqual([404, "KS-4301"]);
    expect(codeOf(await acknowledge(world, "2026-03-08"))).toEqual([404, "KS-4301"]);
    expect(codeOf(await dispute(world, "2026-03-08"))).toEqual([404, "KS-4301"]);
    // The same partner's sandbox key does not see the production report.
    const sandboxKey = await api.createPartner({ environment: "sandbox" });
    const other = { ...world, apiKey: sandboxKey.apiKey };
    expect(codeOf(await get(other, "2026-03-07"))).toEqual([404, "KS-4301"]);
    expect(codeOf(await acknowledge(other, "2026-03-07"))).toEqual([404, "KS-4301"]);
    expect((await get(world, "2026-03-07")).body.status).toBe("GENERATED");
  });

  it("answers KS-4105 for a bad date before anything else", async () => {
    const world = await withReport("2026-03-09");
    for (const date of ["2026-02-30", "2026-3-09", "yesterday", "20260309", "2026-03-09T00:00:00Z"]) {
      expect(codeOf(await get(world, date)), date).toEqual([400, "KS-4105"]);
      expect(codeOf(await acknowledge(world, date)), date).toEqual([400, "KS-4105"]);
      expect(codeOf(await dispute(world, date, {})), date).toEqual([400, "KS-4105"]);
    }
  });
});

describe("GET /settlements", () => {
  it("pages the caller's reports newest day first", async () => {
    const world = await settlementWorld(api, "sandbox", 1);
    const dates = ["2026-01-03", "2026-01-01", "2026-01-04", "2026-01-02"];
    for (const reportDate of dates)
      await operatorGenerate(api, world.partnerId, { reportDate, environment: "sandbox" });
    await withReport("2026-01-05"); // another partner's report never shows up

    const first = await api.request(`${BASE}?limit=3`, { apiKey: world.apiKey });
    expect(first.status).toBe(200);
    expect(first.body.reports.map((report: { reportDate: string }) => report.reportDate)).toEqual([
      "2026-01-04",
      "2026-01-03",
      "2026-01-02",
    ]);
    expect([first.body.page, first.body.limit, first.body.total]).toEqual([1, 3, 4]);
    const second = await api.request(`${BASE}?limit=3&page=2`, { apiKey: world.apiKey });
    expect(second.body.reports.map((report: { reportDate: string }) => report.reportDate)).toEqual(["2026-01-01"]);
    const defaults = await api.request(BASE, { apiKey: world.apiKey });
    expect([defaults.body.page, defaults.body.limit, defaults.body.reports.length]).toEqual([1, 20, 4]);
    expect(defaults.body.reports[0]).toEqual(
      expect.objectContaining({ status: "GENERATED", totalSpins: 0, rtp: null, games: expect.any(Array) }),
    );
    for (const query of ["limit=0", "limit=101", "page=0", "page=x"]) {
      expect(codeOf(await api.request(`${BASE}?${query}`, { apiKey: world.apiKey })), query).toEqual([400, "KS-4101"]);
    }
  });

  it("needs an API key", async () => {
    expect(codeOf(await api.request(BASE))).toEqual([401, "KS-4001"]);
  });
});
