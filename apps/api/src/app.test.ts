import { TEST_ADMIN_TOKEN, type TestApi } from "@outcomes/testkit/api";
import { testApiForFile } from "@outcomes/testkit/file-fixture";
import { describe, expect, it } from "vitest";

const api = testApiForFile({ RATE_LIMIT_REQUESTS_PER_SECOND: "3" });

describe("errors, health and partner authentication", () => {
  it("answers health and readiness", async () => {
    expect((await api.request("/healthz")).status).toBe(200);
    const ready = await api.request("/readyz");
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: "ok", postgres: "ok", redis: "ok" });
  });

  it("renders unknown routes as KS-4215 with a request id", async () => {
    const response = await api.request("/nope");
    expect(response.status).toBe(404);
    expect(response.body.errorCode).toBe("KS-4215");
    expect(response.body.requestId).toBe(response.headers.get("x-request-id"));
  });

  it("refuses a missing, mistyped or unknown key with the exact codes", async () => {
    expect((await api.request("/api/partner/v1/games")).body.errorCode).toBe("KS-4001");
    const mistyped = await api.request("/api/partner/v1/games", { apiKey: "ks_sandbox_nothing" });
    expect([mistyped.status, mistyped.body.errorCode]).toEqual([401, "KS-4002"]);
  });

  it("refuses the operator API without the right token", async () => {
    expect((await api.request("/api/admin/v1/partners")).body.errorCode).toBe("KS-4001");
    const wrong = await api.request("/api/admin/v1/partners", { headers: { Authorization: "Bearer wrong" } });
    expect([wrong.status, wrong.body.errorCode]).toEqual([401, "KS-4002"]);
    const basic = await api.request("/api/admin/v1/nothing-here", {
      headers: { Authorization: `Basic ${Buffer.from(`ops:${TEST_ADMIN_TOKEN}`).toString("base64")}` },
    });
    expect(basic.body.errorCode).toBe("KS-4215");
  });

  it("rate-limits partner requests with headers and Retry-After", async () => {
    const { apiKey } = await api.createPartner();
    const statuses: number[] = [];
    let last: Awaited<ReturnType<TestApi["request"]>> | undefined;
    for (let i = 0; i < 5; i++) {
      last = await api.request("/api/partner/v1/does-not-exist", { apiKey });
      statuses.push(last.status);
    }
    expect(statuses.slice(0, 3)).toEqual([404, 404, 404]);
    expect(last?.status).toBe(429);
    expect(last?.body.errorCode).toBe("KS-4292");
    expect(Number(last?.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(last?.headers.get("x-ratelimit-limit")).toBe("3");
    expect(last?.headers.get("ratelimit-policy")).toBe('"default";q=3;w=1');
  });
});
