import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import { registerTestGame } from "@outcomes/testkit/games";
import { parseExposition, sampleValue } from "@outcomes/testkit/metrics";
import { eventually } from "@outcomes/testkit/workers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const MAIN = fileURLToPath(new URL("./main.ts", import.meta.url));
const TARGETS = { BLOCK_SIZE: "100", MIN_READY_BLOCKS: "1", TARGET_READY_BLOCKS: "2" };

let api: TestApi;
let worker: ChildProcess;
let exited: Promise<number | null>;
let metricsUrl = "";

beforeAll(async () => {
  api = await startTestApi(TARGETS);
  worker = spawn(process.execPath, ["--import", "tsx", MAIN, "--role", "blocks"], {
    env: {
      ...process.env,
      ...TARGETS,
      DATABASE_URL: api.database.url,
      REDIS_PREFIX: api.deps.env.REDIS_PREFIX,
      WORKER_METRICS_PORT: "0",
      LOG_LEVEL: "info",
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  exited = new Promise((resolve) => worker.once("exit", (code) => resolve(code)));
  let output = "";
  const port = await new Promise<number>((resolve, reject) => {
    worker.stdout?.on("data", (chunk: Buffer) => {
      output += chunk.toString();
      const listening = /"port":(\d+),"msg":"metrics listening"/.exec(output);
      if (listening && output.includes('"role started"')) resolve(Number(listening[1]));
    });
    void exited.then((code) => reject(new Error(`worker exited with ${code}:\n${output}`)));
  });
  metricsUrl = `http://127.0.0.1:${port}`;
}, 30_000);
afterAll(async () => {
  worker.kill("SIGTERM");
  expect(await exited).toBe(0);
  await api.close();
});

async function scrape(base: string) {
  const response = await fetch(`${base}/metrics`);
  expect(response.status).toBe(200);
  return parseExposition(await response.text());
}

describe("worker metrics", () => {
  it("serves /metrics and /healthz on WORKER_METRICS_PORT with process metrics", async () => {
    expect((await fetch(`${metricsUrl}/healthz`)).status).toBe(200);
    const samples = await scrape(metricsUrl);
    expect(samples.some((sample) => sample.name === "outcomes_process_resident_memory_bytes")).toBe(true);
  });

  it("counts the blocks a blocks worker seals, and the API reads the reserve they make", async () => {
    const { gameId } = await registerTestGame(api, { fill: false });
    await api.deps.producers.add("blocks.generate", { gameId });
    const labels = { game_id: String(gameId) };
    const samples = await eventually(async () => {
      const current = await scrape(metricsUrl);
      return sampleValue(current, "outcomes_blocks_generated_total", labels) === 2 && current;
    });
    expect(sampleValue(samples, "outcomes_block_outcomes_generated_total", labels)).toBe(200);

    const reserve = await scrape(api.metricsUrl);
    expect(sampleValue(reserve, "outcomes_reserve_ready_blocks", labels)).toBe(2);
    expect(sampleValue(reserve, "outcomes_reserve_remaining_outcomes", labels)).toBe(200);
  });
});
