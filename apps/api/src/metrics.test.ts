import { blocks } from "@outcomes/db";
import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import { parseExposition, sampleValue } from "@outcomes/testkit/metrics";
import { addBlock, createGame, spin } from "@outcomes/testkit/spin-path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({ RATE_LIMIT_REQUESTS_PER_SECOND: "2" });
});
afterAll(async () => {
  await api.close();
});

async function scrape() {
  const response = await fetch(`${api.metricsUrl}/metrics`);
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toContain("text/plain");
  return parseExposition(await response.text());
}

/** A game with `ready` sealed blocks and `queued` outcomes in its Redis list, written directly. */
async function gameWithReserve(ready: number, queued: number): Promise<number> {
  const { partnerId } = await api.createPartner();
  const { gameId } = await createGame(api, partnerId);
  const statuses = ["serving", ...Array.from({ length: ready }, () => "ready" as const)] as const;
  await api.database.db.insert(blocks).values(
    statuses.map((status, sequence) => ({
      gameId,
      sequence,
      size: 3,
      entries: Buffer.from("[]"),
      commitment: "x",
      status,
    })),
  );
  if (queued > 0)
    await api.deps.redis.rpush(api.deps.keys.outcomeQueue(await api.gameOwner(gameId)), ...Array(queued).fill("o"));
  return gameId;
}

describe("Prometheus metrics at /metrics", () => {
  it("are not on the partner port: 404 KS-4215 there, as any unknown route (issue 38, item 3)", async () => {
    const answer = await api.request("/metrics");
    expect([answer.status, answer.body.errorCode]).toEqual([404, "KS-4215"]);
    expect(JSON.stringify(answer.body)).not.toContain("outcomes_");
  });

  it("exposes parseable text with process metrics and no auth", async () => {
    const samples = await scrape();
    expect(samples.some((sample) => sample.name === "outcomes_process_cpu_user_seconds_total")).toBe(true);
    expect(samples.some((sample) => sample.name === "outcomes_nodejs_eventloop_lag_seconds")).toBe(true);
  });

  it("times requests by route pattern and status, never by raw path", async () => {
    const { apiKey } = await api.createPartner();
    await api.request("/healthz");
    await api.request("/api/partner/v1/no-such-thing", { apiKey });
    await api.request("/api/admin/v1/openapi.json");
    const samples = await scrape();
    const count = (labels: Record<string, string>) =>
      sampleValue(samples, "outcomes_http_request_duration_seconds_count", labels);
    expect(count({ method: "GET", route: "/healthz", status: "200" })).toBeGreaterThanOrEqual(1);
    expect(count({ method: "GET", route: "unmatched", status: "404" })).toBeGreaterThanOrEqual(1);
    expect(count({ method: "GET", route: "/api/admin/v1/openapi.json", status: "401" })).toBe(1);
    expect(samples.some((sample) => sample.labels.route?.includes("no-such-thing"))).toBe(false);
  });

  it("counts rate-limit rejections by bucket", async () => {
    const before = sampleValue(await scrape(), "outcomes_rate_limit_rejections_total", { bucket: "default" });
    const { apiKey } = await api.createPartner();
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await api.request("/api/partner/v1/nothing", { apiKey })).status);
    const rejected = statuses.filter((status) => status === 429).length;
    expect(rejected).toBeGreaterThan(0);
    const after = sampleValue(await scrape(), "outcomes_rate_limit_rejections_total", { bucket: "default" });
    expect(after - before).toBe(rejected);
  });

  it("moves the spin, wager and payout counters when spins commit, not on replays or failures", async () => {
    const { partnerId, apiKey } = await api.createPartner();
    const { gameId } = await createGame(api, partnerId);
    await addBlock(api, gameId, [
      ["T0", 0],
      ["T2", "2.5"],
    ]);
    const labels = { game_id: String(gameId) };
    const before = await scrape();
    expect((await spin(api, apiKey, { gameId, playerId: "p-1", wagerUsd: 2 })).status).toBe(200);
    expect((await spin(api, apiKey, { gameId, playerId: "p-1", wagerUsd: 0.4 }, "spin-key")).status).toBe(200);
    expect((await spin(api, apiKey, { gameId, playerId: "p-1", wagerUsd: 0.4 }, "spin-key")).status).toBe(200);
    expect((await spin(api, apiKey, { gameId, playerId: "p-1", wagerUsd: 1 })).status).toBe(503);
    const after = await scrape();
    const delta = (name: string, extra: Record<string, string> = {}) =>
      sampleValue(after, name, { ...labels, ...extra }) - sampleValue(before, name, { ...labels, ...extra });
    expect(delta("outcomes_spins_total")).toBe(2);
    expect(delta("outcomes_spins_total", { tier: "T0" })).toBe(1);
    expect(delta("outcomes_spins_total", { tier: "T2" })).toBe(1);
    expect(delta("outcomes_wagered_micros_total")).toBe(2_400_000);
    expect(delta("outcomes_payout_micros_total")).toBe(1_000_000);
    expect(delta("outcomes_http_request_duration_seconds_count", { route: "/api/partner/v1/spins" })).toBe(0);
    const spins = (status: string) =>
      sampleValue(after, "outcomes_http_request_duration_seconds_count", { route: "/api/partner/v1/spins", status });
    expect(spins("200")).toBe(3);
    expect(spins("503")).toBe(1);
  });

  it("reads the outcome reserve per game from Postgres and Redis at scrape time", async () => {
    const gameId = await gameWithReserve(2, 7);
    let samples = await scrape();
    const labels = { game_id: String(gameId) };
    expect(sampleValue(samples, "outcomes_reserve_ready_blocks", labels)).toBe(2);
    expect(sampleValue(samples, "outcomes_reserve_remaining_outcomes", labels)).toBe(7);

    await api.deps.redis.lpop(api.deps.keys.outcomeQueue(await api.gameOwner(gameId)), 3);
    samples = await scrape();
    expect(sampleValue(samples, "outcomes_reserve_remaining_outcomes", labels)).toBe(4);
  });

  it("reads how far ahead each time-partitioned table's partitions reach at scrape time", async () => {
    const samples = await scrape();
    for (const table of ["spins", "events", "idempotency_keys"]) {
      // The migration made a week ahead (events: to the end of the month holding that week).
      expect(sampleValue(samples, "outcomes_partitions_ahead_seconds", { table })).toBeGreaterThan(6 * 86_400);
    }
  });

  it("reads queue depths from BullMQ at scrape time", async () => {
    const jobs = (samples: Awaited<ReturnType<typeof scrape>>, queue: string, state: string) =>
      sampleValue(samples, "outcomes_queue_jobs", { queue, state });
    const before = await scrape();
    await api.deps.producers.add("settlement.generate", {}, { delay: 60_000 });
    await api.deps.producers.add("blocks.generate", { gameId: 1 });
    await api.deps.producers.add("blocks.generate", { gameId: 2 });
    const after = await scrape();
    expect(jobs(after, "blocks", "waiting") - jobs(before, "blocks", "waiting")).toBe(2);
    expect(jobs(after, "settlements", "delayed") - jobs(before, "settlements", "delayed")).toBe(1);
    expect(jobs(after, "webhooks", "active")).toBe(0);
    expect(after.some((s) => s.name === "outcomes_queue_jobs" && s.labels.queue === "key-expiry")).toBe(true);
  });
});
