import { createWorkerRedis } from "@outcomes/queue";
import { startTestApi, TEST_ADMIN_TOKEN, type TestApi } from "@outcomes/testkit/api";
import { browserMissing, iconStatus, openOffline } from "@outcomes/testkit/browser";
import { UnrecoverableError, Worker } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api.close();
});

const basic = (password: string) => ({ Authorization: `Basic ${Buffer.from(`ops:${password}`).toString("base64")}` });

describe("queue dashboard at /admin/queues", () => {
  it("asks a browser for basic auth without credentials", async () => {
    const response = await api.request("/admin/queues");
    expect(response.status).toBe(401);
    expect(response.body.errorCode).toBe("KS-4001");
    expect(response.headers.get("www-authenticate")).toBe('Basic realm="operators"');
    const api401 = await api.request("/admin/queues/api/queues");
    expect([api401.status, api401.body.errorCode]).toEqual([401, "KS-4001"]);
  });

  it("refuses a wrong token as password or bearer", async () => {
    const wrongBasic = await api.request("/admin/queues", { headers: basic("not-the-token") });
    expect([wrongBasic.status, wrongBasic.body.errorCode]).toEqual([401, "KS-4002"]);
    const wrongBearer = await api.request("/admin/queues/api/queues", { headers: { Authorization: "Bearer nope" } });
    expect([wrongBearer.status, wrongBearer.body.errorCode]).toEqual([401, "KS-4002"]);
  });

  it("serves the board and its assets to the token as basic-auth password", async () => {
    const page = await api.request("/admin/queues", { headers: basic(TEST_ADMIN_TOKEN) });
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("text/html");
    expect(page.body).toContain('<base href="/admin/queues/"');
    // Nothing from another site (Bull Board links Google Fonts): the board must work air-gapped.
    expect(page.body).not.toMatch(/(src|href)="(https?:)?\/\//);
    expect(page.headers.get("content-security-policy")).toContain("default-src 'self'");
    const script = /src="(static\/js\/main\.[^"]+\.js)"/.exec(page.body)?.[1];
    expect(script).toBeDefined();
    const asset = await fetch(`${api.baseUrl}/admin/queues/${script}`, { headers: basic(TEST_ADMIN_TOKEN) });
    expect(asset.status).toBe(200);
    expect(asset.headers.get("content-type")).toContain("javascript");
  });

  it("answers a path the board does not know with the service's 404", async () => {
    const response = await api.request("/admin/queues/api/no-such-thing", { admin: true });
    expect([response.status, response.body.errorCode]).toEqual([404, "KS-4215"]);
  });

  it("lists every queue of the catalog to a bearer token", async () => {
    const response = await api.request("/admin/queues/api/queues", { admin: true });
    expect(response.status).toBe(200);
    const names = (response.body.queues as Array<{ name: string }>).map((queue) => queue.name).sort();
    expect(names).toEqual(["blocks", "key-expiry", "settlements", "webhook-batches", "webhook-recovery", "webhooks"]);
  });

  it("retries a failed job from the board", async () => {
    const queue = api.deps.producers.queues["key-expiry"];
    const connection = createWorkerRedis(api.deps.env);
    const worker = new Worker(
      "key-expiry",
      async () => {
        throw new UnrecoverableError("failing on purpose");
      },
      { connection, prefix: api.deps.keys.bull },
    );
    const failed = new Promise<void>((resolve) => worker.once("failed", () => resolve()));
    const job = await api.deps.producers.add("key-expiry.sweep", {});
    await failed;
    await worker.close();
    await connection.quit();
    expect(await job.getState()).toBe("failed");

    const retry = await api.request(`/admin/queues/api/queues/key-expiry/${job.id}/retry`, {
      method: "PUT",
      admin: true,
    });
    expect(retry.status).toBe(204);
    expect(await queue.getJobState(job.id ?? "")).toBe("waiting");
  });

  it("pauses and resumes a queue once the rollout has finished, and refuses to while it runs", async () => {
    const running = await startTestApi({}, { rollout: "running" });
    try {
      const settlements = running.deps.producers.queues.settlements;
      for (const path of [
        "settlements/pause",
        "settlements/resume",
        "settlements/empty",
        "settlements/obliterate",
        "pause",
      ]) {
        const refused = await running.request(`/admin/queues/api/queues/${path}`, { method: "PUT", admin: true });
        expect([path, refused.status, refused.body.errorCode]).toEqual([path, 404, "KS-4215"]);
      }
      expect(await settlements.isPaused()).toBe(false);
      // The rest of the board still answers while the rollout runs.
      const queues = await running.request("/admin/queues/api/queues", { admin: true });
      expect(queues.status).toBe(200);
    } finally {
      await running.close();
    }

    const blocks = api.deps.producers.queues.blocks;
    const pause = await api.request("/admin/queues/api/queues/blocks/pause", { method: "PUT", admin: true });
    expect(pause.status).toBe(200);
    expect(await blocks.isPaused()).toBe(true);
    const resume = await api.request("/admin/queues/api/queues/blocks/resume", { method: "PUT", admin: true });
    expect(resume.status).toBe(200);
    expect(await blocks.isPaused()).toBe(false);
  });
});

describe("queue dashboard in a browser without internet", () => {
  it("shows every queue with nothing but the service", async ({ skip }) => {
    skip(browserMissing !== undefined, browserMissing);
    const { page, external, errors, close } = await openOffline(api.baseUrl, {
      httpCredentials: { username: "ops", password: TEST_ADMIN_TOKEN },
    });
    try {
      await page.goto(`${api.baseUrl}/admin/queues`, { waitUntil: "networkidle" });
      await page.getByText("Outcome service queues").first().waitFor();
      for (const queue of ["blocks", "key-expiry", "settlements", "webhook-batches", "webhook-recovery", "webhooks"]) {
        await page.getByText(queue, { exact: true }).first().waitFor();
      }
      expect(external).toEqual([]);
      expect(errors).toEqual([]);
      expect(await iconStatus(page)).toBe(200);
    } finally {
      await close();
    }
  });
});
