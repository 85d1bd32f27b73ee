import { type Environment, previousUtcDay } from "@outcomes/core";
import {
  events,
  generateSettlementReport,
  partners,
  rollupCoverage,
  settlementReports,
  transitionSettlementReport,
} from "@outcomes/db";
import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import { createSpinFixture, insertFixtureSpins, type SpinFixture } from "@outcomes/testkit/spin-rows";
import { eventually, registerWebhook, startReceiver, startRole } from "@outcomes/testkit/workers";
import type { Job } from "bullmq";
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { webhooksRole } from "../webhooks/index.js";
import { ROLLUP_SCHEDULER_ID, SETTLEMENT_SCHEDULER_ID, startSettlementsRole } from "./index.js";
import type { SettlementRunProgress } from "./run.js";

let api: TestApi;
let worker: Awaited<ReturnType<typeof startRole>>;
beforeAll(async () => {
  api = await startTestApi({ SETTLEMENT_CRON: "15 3 * * *" });
  worker = await startRole(api, startSettlementsRole);
});
afterAll(async () => {
  await worker?.close();
  await api?.close();
});

const queue = () => api.deps.producers.queues.settlements;

async function runJob(data: Record<string, string> = {}): Promise<Job> {
  const queued = await api.deps.producers.add("settlement.generate", data);
  return eventually(async () => {
    const job = await queue().getJob(queued.id!);
    if (job?.failedReason) throw new Error(job.failedReason);
    return job?.finishedOn ? job : undefined;
  }) as Promise<Job>;
}

async function fixture(environment: Environment, options: { partnerId?: string; active?: boolean } = {}) {
  const spinFixture = await createSpinFixture(api.database.db, { environment, partnerId: options.partnerId });
  if (options.active === false) {
    await api.database.db.update(partners).set({ isActive: false }).where(eq(partners.id, spinFixture.partnerId));
  }
  return spinFixture;
}

const spinOn = (f: SpinFixture, reportDate: string, wagerMicros = 1_000_000, payoutMicros = 0) =>
  insertFixtureSpins(api.database.db, f, [
    { gameId: f.gameIds[0]!, wagerMicros, payoutMicros, createdAt: new Date(`${reportDate}T10:00:00.000Z`) },
  ]);

async function reportsOf(partnerId: string) {
  return api.database.db.select().from(settlementReports).where(eq(settlementReports.partnerId, partnerId));
}

async function eventsOf(partnerId: string) {
  return api.database.db
    .select()
    .from(events)
    .where(and(eq(events.partnerId, partnerId), eq(events.type, "settlement.report_ready")));
}

describe("settlements role", () => {
  it("keeps one UTC scheduler on SETTLEMENT_CRON and one minute scheduler for the roll-ups", async () => {
    const daily = await queue().getJobScheduler(SETTLEMENT_SCHEDULER_ID);
    expect(daily).toMatchObject({ name: "settlement.generate", pattern: "15 3 * * *", tz: "UTC" });
    const rollup = await queue().getJobScheduler(ROLLUP_SCHEDULER_ID);
    expect(rollup).toMatchObject({ name: "settlement.rollup", every: 60_000 });
    // A second copy of the role upserts the same schedulers instead of adding any.
    const second = await startRole(api, startSettlementsRole);
    await second.close();
    expect(await queue().getJobSchedulersCount()).toBe(2);
    // The first roll-up step runs at once and starts the coverage at the current hour.
    const coverage = await eventually(() => rollupCoverage(api.database.db));
    expect(coverage.coveredFrom.getTime() % 3_600_000).toBe(0);
  });

  it("settles the previous UTC day for every partner and environment with games, and skips the rest", async () => {
    const day = previousUtcDay(new Date());
    const both = await fixture("sandbox");
    const bothProduction = await fixture("production", { partnerId: both.partnerId });
    await spinOn(both, day, 2_500_000, 5_000_000);
    const noGames = await api.createPartner();
    const dormant = await fixture("sandbox", { active: false });
    const deactivatedWithSpins = await fixture("production", { active: false });
    await spinOn(deactivatedWithSpins, day);
    const settled = await fixture("sandbox");
    await spinOn(settled, day);
    const settledKey = { partnerId: settled.partnerId, environment: "sandbox" as const, reportDate: day };
    await generateSettlementReport(api.database.db, settledKey, "refuse");
    await transitionSettlementReport(api.database.db, settledKey, { type: "acknowledge" });
    await spinOn(settled, day); // a late spin must not reopen an acknowledged report

    const job = await runJob();
    const summary = job.returnvalue as SettlementRunProgress;
    // Days are settled as of the job's time; the test may straddle midnight only in theory.
    expect(summary.reportDate).toBe(day);

    const bothReports = await reportsOf(both.partnerId);
    expect(bothReports.map((report) => [report.environment, report.reportDate, report.totalSpins]).sort()).toEqual([
      ["production", day, 0],
      ["sandbox", day, 1],
    ]);
    expect(bothReports.find((report) => report.environment === "sandbox")).toMatchObject({
      status: "GENERATED",
      provisional: false,
      totalWageredMicros: 2_500_000n,
      totalPaidMicros: 5_000_000n,
    });
    expect(bothProduction.gameIds).toHaveLength(1);
    expect(await reportsOf(noGames.partnerId)).toEqual([]);
    expect(await reportsOf(dormant.partnerId)).toEqual([]);
    expect((await reportsOf(deactivatedWithSpins.partnerId)).map((report) => report.totalSpins)).toEqual([1]);
    const [acknowledged] = await reportsOf(settled.partnerId);
    expect([acknowledged?.status, acknowledged?.totalSpins]).toEqual(["acknowledged", 1]);
    expect(await eventsOf(settled.partnerId)).toHaveLength(1);
    expect(await eventsOf(both.partnerId)).toHaveLength(2);

    // Progress is on the job: every candidate done, the settled one counted as skipped.
    expect(job.progress).toEqual(summary);
    expect(summary.done).toBe(summary.total);
    expect(summary.skipped).toBeGreaterThanOrEqual(1);
    expect(summary.created).toBeGreaterThanOrEqual(3);
    expect(summary.failed).toBe(0);
    const { logs } = await queue().getJobLogs(job.id!);
    expect(logs[0]).toMatch(new RegExp(`^settling ${day}: \\d+ partner environment`));

    // Running it again changes nothing and announces nothing.
    const again = (await runJob()).returnvalue as SettlementRunProgress;
    expect(again.created + again.updated).toBe(0);
    expect(await eventsOf(both.partnerId)).toHaveLength(2);
  });

  it("narrows a run to one day, partner and environment", async () => {
    const target = await fixture("sandbox");
    await fixture("production", { partnerId: target.partnerId });
    const other = await fixture("sandbox");
    const job = await runJob({ reportDate: "2025-11-30", partnerId: target.partnerId, environment: "sandbox" });
    expect(job.returnvalue).toMatchObject({ reportDate: "2025-11-30", total: 1, created: 1 });
    expect((await reportsOf(target.partnerId)).map((report) => [report.environment, report.reportDate])).toEqual([
      ["sandbox", "2025-11-30"],
    ]);
    expect(await reportsOf(other.partnerId)).toEqual([]);
  });

  it("yields one report per partner when two workers run the same day at once", async () => {
    const second = await startRole(api, startSettlementsRole);
    try {
      const fixtures = await Promise.all([fixture("sandbox"), fixture("sandbox"), fixture("production")]);
      for (const f of fixtures) await spinOn(f, "2025-12-24", 3_000_000);
      await Promise.all([runJob({ reportDate: "2025-12-24" }), runJob({ reportDate: "2025-12-24" })]);
      for (const f of fixtures) {
        expect((await reportsOf(f.partnerId)).map((report) => report.totalSpins)).toEqual([1]);
        expect(await eventsOf(f.partnerId)).toHaveLength(1);
      }
    } finally {
      await second.close();
    }
  });
});

describe("settlement.report_ready reaches a webhook", () => {
  it("is delivered, signed, with the report's figures", async () => {
    const webhooks = await startRole(api, webhooksRole({ pollIntervalMs: 100 }));
    const receiver = await startReceiver();
    try {
      const hook = await registerWebhook(api, receiver.url, ["settlement.report_ready"], "sandbox");
      const f = await fixture("sandbox", { partnerId: hook.partnerId });
      await spinOn(f, "2025-10-10", 4_000_000, 1_000_000);
      await runJob({ reportDate: "2025-10-10", partnerId: hook.partnerId });
      const request = await eventually(() => receiver.requests[0]);
      expect(String(request!.headers["x-service-event"])).toBe("settlement.report_ready");
      const body = JSON.parse(request!.rawBody.toString("utf8"));
      expect(body).toMatchObject({
        type: "settlement.report_ready",
        environment: "sandbox",
        data: {
          reportDate: "2025-10-10",
          status: "GENERATED",
          totalSpins: 1,
          totalWageredUsd: 4,
          totalPaidUsd: 1,
          netUsd: 3,
        },
      });
      const [event] = await eventsOf(hook.partnerId);
      expect(body.id).toBe(event?.id);
    } finally {
      await receiver.close();
      await webhooks.close();
    }
  });
});
