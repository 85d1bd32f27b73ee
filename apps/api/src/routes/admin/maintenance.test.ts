import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api.close();
});

const setMaintenance = (json: unknown) =>
  api.request("/api/admin/v1/maintenance", { method: "POST", admin: true, json });

describe("maintenance mode", () => {
  it("starts off", async () => {
    const response = await api.request("/api/admin/v1/maintenance", { admin: true });
    expect([response.status, response.body]).toEqual([200, { enabled: false }]);
  });

  it("turns partner calls into 503 KS-5002 with Retry-After: 60 while operators and health stay up", async () => {
    const { apiKey } = await api.createPartner();
    const on = await setMaintenance({ enabled: true });
    expect([on.status, on.body]).toEqual([200, { enabled: true }]);
    expect((await api.request("/api/admin/v1/maintenance", { admin: true })).body).toEqual({ enabled: true });

    for (const init of [{ apiKey }, {}, { apiKey: "ks_sandbox_mistyped" }]) {
      const response = await api.request("/api/partner/v1/games", init);
      expect([response.status, response.body.errorCode]).toEqual([503, "KS-5002"]);
      expect(response.headers.get("retry-after")).toBe("60");
      expect(response.body.requestId).toBe(response.headers.get("x-request-id"));
    }
    expect((await api.request("/healthz")).status).toBe(200);
    expect((await api.request("/readyz")).status).toBe(200);
    expect((await api.request("/api/admin/v1/partners", { admin: true })).status).toBe(200);

    const off = await setMaintenance({ enabled: false });
    expect([off.status, off.body]).toEqual([200, { enabled: false }]);
    const after = await api.request("/api/partner/v1/no-such-route", { apiKey });
    expect(after.body.errorCode).toBe("KS-4215");
  });

  it("is idempotent both ways", async () => {
    for (const enabled of [true, true, false, false]) {
      expect((await setMaintenance({ enabled })).body).toEqual({ enabled });
    }
  });

  it.each([
    [{ enabled: "yes" }, "KS-4101"],
    [{ enabled: 1 }, "KS-4101"],
    [{ enabled: true, reason: "deploy" }, "KS-4101"],
    [{}, "KS-4102"],
    [{ enabled: null }, "KS-4102"],
  ])("refuses %j with %s and leaves the state alone", async (json, code) => {
    const response = await setMaintenance(json);
    expect([response.status, response.body.errorCode]).toEqual([400, code]);
    expect((await api.request("/api/admin/v1/maintenance", { admin: true })).body).toEqual({ enabled: false });
  });

  it("needs the operator token", async () => {
    const response = await api.request("/api/admin/v1/maintenance", { method: "POST", json: { enabled: true } });
    expect([response.status, response.body.errorCode]).toEqual([401, "KS-4001"]);
  });
});

describe("without ADMIN_TOKEN", () => {
  it("the operator API answers 503 KS-5002 while partner calls still work", async () => {
    const locked = await startTestApi({ ADMIN_TOKEN: "" });
    try {
      const response = await locked.request("/api/admin/v1/partners", { admin: true });
      expect([response.status, response.body.errorCode]).toEqual([503, "KS-5002"]);
      const { apiKey } = await locked.createPartner();
      expect((await locked.request("/api/partner/v1/no-such-route", { apiKey })).body.errorCode).toBe("KS-4215");
    } finally {
      await locked.close();
    }
  });
});
