import { spawn } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import { startRole } from "@outcomes/testkit/workers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROLES } from "../../apps/worker/src/roles.js";

const GUIDE = new URL("../../docs/partners/guide.md", import.meta.url);
const SDK = new URL("../../packages/sdk", import.meta.url).pathname;

let api: TestApi;
let workers: Array<{ close: () => Promise<void> }> = [];
let dir: string;

beforeAll(async () => {
  api = await startTestApi({ BLOCK_SIZE: "500" });
  workers = [await startRole(api, ROLES.blocks), await startRole(api, ROLES.webhooks)];
  // A partner's folder: the SDK installed as a package (here linked to the built one), the guide's code.
  dir = await mkdtemp(join(tmpdir(), "partner-guide-"));
  await mkdir(join(dir, "node_modules/@outcomes"), { recursive: true });
  await symlink(SDK, join(dir, "node_modules/@outcomes/sdk"));
  await writeFile(join(dir, "package.json"), JSON.stringify({ type: "module", private: true }));
  const blocks = [...(await readFile(GUIDE, "utf8")).matchAll(/```js\n([\s\S]*?)```/g)].map((match) => match[1]);
  await writeFile(join(dir, "integration.js"), blocks.join("\n"));
});
afterAll(async () => {
  for (const worker of workers) await worker.close();
  await api?.close();
  await rm(dir, { recursive: true, force: true });
});

/**
 * docs/partners/guide.md's code, as a partner pastes it, against the real API and workers: it must
 * reach a verified proof and an acknowledged report of a past day (which the operator generates
 * while the program waits for it, as the guide says).
 */
describe("the partner guide's program", () => {
  it("runs from first spin to an acknowledged report and a verified proof", async () => {
    const { partnerId, apiKey } = await api.createPartner();
    const child = spawn(process.execPath, ["integration.js"], {
      cwd: dir,
      env: { ...process.env, OUTCOMES_BASE_URL: api.baseUrl, OUTCOMES_API_KEY: apiKey },
    });
    let output = "";
    child.stdout.on("data", (chunk) => {
      output += chunk;
    });
    child.stderr.on("data", (chunk) => {
      output += chunk;
    });
    const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));

    // The operator's part: once the program reads the event log, yesterday's report is generated.
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    for (let waited = 0; !output.includes("event log read up to sequence"); waited += 100) {
      if (waited > 60_000 || child.exitCode !== null) throw new Error(`the program stopped early:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const report = await api.request(`/api/admin/v1/partners/${partnerId}/settlements`, {
      method: "POST",
      admin: true,
      json: { reportDate: yesterday, environment: "sandbox" },
    });
    expect(report.status).toBe(201);

    expect(await exited, output).toBe(0);
    expect(output).toContain("voided round");
    expect(output).toMatch(/webhook received \[.*'spin\.large_win'/);
    expect(output).toContain(`report ${yesterday} GENERATED`);
    expect(output).toMatch(/acknowledged at \d{4}-/);
    expect(output).toMatch(/proof verified for spn_/);
  }, 90_000);
});
