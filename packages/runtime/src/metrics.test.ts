import { readFileSync } from "node:fs";
import { parseExposition, sampleValue } from "@outcomes/testkit/metrics";
import { afterAll, describe, expect, it } from "vitest";
import {
  collectProcessMetrics,
  countBlockGenerated,
  countSpin,
  countWebhookAttempt,
  metricsRegistry,
  observeQueues,
  observeReserve,
} from "./metrics.js";
import { type MetricsServer, startMetricsServer } from "./metrics-server.js";

let server: MetricsServer | undefined;
afterAll(async () => {
  await server?.close();
});

async function scrape() {
  server ??= await startMetricsServer(0, "127.0.0.1");
  const response = await fetch(`http://127.0.0.1:${server.port}/metrics`);
  expect(response.status).toBe(200);
  return parseExposition(await response.text());
}

describe("process metrics", () => {
  it("counts spins by game and tier with exact micro-USD sums", async () => {
    const before = await scrape();
    countSpin({ gameId: 41, tier: "T0", wagerMicros: 1_000_000, payoutMicros: 0 });
    countSpin({ gameId: 41, tier: "T3", wagerMicros: 100_000, payoutMicros: 2_500_000 });
    countSpin({ gameId: 41, tier: "T3", wagerMicros: 200_000, payoutMicros: 5_000_000 });
    const after = await scrape();
    const delta = (name: string, labels: Record<string, string>) =>
      sampleValue(after, name, labels) - sampleValue(before, name, labels);
    expect(delta("outcomes_spins_total", { game_id: "41", tier: "T3" })).toBe(2);
    expect(delta("outcomes_spins_total", { game_id: "41", tier: "T0" })).toBe(1);
    expect(delta("outcomes_wagered_micros_total", { game_id: "41" })).toBe(1_300_000);
    expect(delta("outcomes_payout_micros_total", { game_id: "41" })).toBe(7_500_000);
  });

  it("counts generated blocks and outcomes, and delivery attempts by status and attempt", async () => {
    countBlockGenerated(7, 10_000);
    countBlockGenerated(7, 10_000);
    countWebhookAttempt("retrying", 1);
    countWebhookAttempt("succeeded", 2);
    const samples = await scrape();
    expect(sampleValue(samples, "outcomes_blocks_generated_total", { game_id: "7" })).toBe(2);
    expect(sampleValue(samples, "outcomes_block_outcomes_generated_total", { game_id: "7" })).toBe(20_000);
    expect(sampleValue(samples, "outcomes_webhook_delivery_attempts_total", { status: "retrying", attempt: "1" })).toBe(
      1,
    );
    expect(
      sampleValue(samples, "outcomes_webhook_delivery_attempts_total", { status: "succeeded", attempt: "2" }),
    ).toBe(1);
  });

  it("reads each gauge source once per scrape and drops games that are gone", async () => {
    let reads = 0;
    let rows = [
      { gameId: 1, readyBlocks: 3, remainingOutcomes: 25_000 },
      { gameId: 2, readyBlocks: 0, remainingOutcomes: 12 },
    ];
    observeReserve(async () => {
      reads++;
      return rows;
    });
    let samples = await scrape();
    expect(reads).toBe(1);
    expect(sampleValue(samples, "outcomes_reserve_ready_blocks", { game_id: "1" })).toBe(3);
    expect(sampleValue(samples, "outcomes_reserve_remaining_outcomes", { game_id: "2" })).toBe(12);

    rows = [{ gameId: 1, readyBlocks: 2, remainingOutcomes: 20_000 }];
    samples = await scrape();
    expect(reads).toBe(2);
    expect(sampleValue(samples, "outcomes_reserve_ready_blocks", { game_id: "1" })).toBe(2);
    expect(samples.some((sample) => sample.labels.game_id === "2")).toBe(false);
  });

  it("keeps serving when a source fails, counting the failure", async () => {
    observeQueues(async () => {
      throw new Error("redis down");
    });
    const before = sampleValue(await scrape(), "outcomes_metrics_collect_errors_total", { collector: "queues" });
    const samples = await scrape();
    expect(sampleValue(samples, "outcomes_metrics_collect_errors_total", { collector: "queues" })).toBe(before + 1);
    expect(samples.some((sample) => sample.name === "outcomes_queue_jobs")).toBe(false);
  });

  it("answers /healthz and 404 elsewhere on the worker metrics server", async () => {
    await scrape();
    const base = `http://127.0.0.1:${server?.port}`;
    expect(server?.port).toBeGreaterThan(0);
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    expect((await fetch(`${base}/nope`)).status).toBe(404);
    expect((await fetch(`${base}/metrics`, { method: "POST" })).status).toBe(404);
  });
});

describe("ops/grafana-dashboard.json", () => {
  it("queries only metrics this code exposes", async () => {
    collectProcessMetrics();
    const exposed = new Set((await metricsRegistry.getMetricsAsJSON()).map((metric) => metric.name));
    const dashboard = readFileSync(new URL("../../../ops/grafana-dashboard.json", import.meta.url), "utf8");
    const queried = new Set(dashboard.match(/outcomes_[a-z0-9_]+/g));
    expect(queried.size).toBeGreaterThan(10);
    for (const name of queried) {
      const family = name.replace(/_(bucket|count|sum)$/, "");
      expect(exposed.has(name) || exposed.has(family), `${name} is not exposed`).toBe(true);
    }
  });
});

describe("exposition parser", () => {
  it("refuses lines that are not exposition", () => {
    expect(() => parseExposition('# TYPE a counter\na{b="c"} 1\n')).not.toThrow();
    expect(() => parseExposition("a 1\n")).toThrow(/no TYPE/);
    expect(() => parseExposition("# TYPE a counter\na{b=c} 1\n")).toThrow(/malformed labels/);
    expect(() => parseExposition("# TYPE a counter\na one\n")).toThrow(/bad value/);
  });
});
