import { SAMPLE_PAR_SHEET, sampleParSheet } from "@outcomes/core";
import { parSheets } from "@outcomes/db";
import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api.close();
});

const upload = (apiKey: string, json: unknown) =>
  api.request("/api/partner/v1/par-sheets", { method: "POST", apiKey, json });

describe("POST /par-sheets", () => {
  it("stores the sample sheet with its exact figures, ACTIVE in sandbox", async () => {
    const { apiKey } = await api.createPartner();
    const response = await upload(apiKey, SAMPLE_PAR_SHEET);
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({
      name: "Lucky Sevens Classic",
      version: "1.0.0",
      status: "ACTIVE",
      drawMode: "independent",
      rtp: 0.96,
      certifiedRtp: 0.96,
      hitFrequency: 0.35331,
      approvedAt: null,
      retiredAt: null,
    });
    expect(response.body.id).toMatch(/^par_/);
    expect(response.body.volatility).toBeCloseTo(Math.sqrt(17.19 - 0.96 ** 2), 10);
    expect(Date.parse(response.body.createdAt)).toBeGreaterThan(Date.now() - 60_000);
  });

  it("keeps the document exactly as uploaded, unknown fields and formatting included", async () => {
    const { apiKey } = await api.createPartner();
    const raw = JSON.stringify({ ...SAMPLE_PAR_SHEET, jurisdiction: "NJ", drawMode: "finite_pool" }, null, 2);
    const response = await api.request("/api/partner/v1/par-sheets", {
      method: "POST",
      headers: { "X-API-Key": apiKey, "Content-Type": "application/json" },
      body: raw,
    });
    expect(response.status).toBe(201);
    expect(response.body.drawMode).toBe("finite_pool");
    const [stored] = await api.database
      .sql`select document::text as text from par_sheets where id = ${response.body.id}`;
    expect(stored?.text).toBe(raw);
    const fetched = await api.request(`/api/partner/v1/par-sheets/${response.body.id}`, { apiKey });
    expect(fetched.body.document.jurisdiction).toBe("NJ");
  });

  it("accepts a certifiedRtp with 16 decimals and keeps it exactly", async () => {
    const { apiKey } = await api.createPartner();
    const response = await upload(apiKey, { ...SAMPLE_PAR_SHEET, certifiedRtp: 0.9600333333333333 });
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({ rtp: 0.96, certifiedRtp: 0.9600333333333333 });
    const [stored] = await api.database.sql`select certified_rtp from par_sheets where id = ${response.body.id}`;
    expect(stored?.certified_rtp).toBe("0.9600333333333333");
  });

  it("refuses a broken sheet with 400 KS-4104 listing every problem, and stores nothing", async () => {
    const { apiKey, partnerId } = await api.createPartner();
    const sheet = sampleParSheet();
    sheet.prizeTiers[2].weight = -1;
    delete sheet.certifiedRtp;
    sheet.combinations[0].symbols = ["LEMON"];
    const shape = await upload(apiKey, sheet);
    expect(shape.status).toBe(400);
    expect(shape.body.errorCode).toBe("KS-4104");
    expect(shape.body.details.map((detail: { path: string }) => detail.path).sort()).toEqual([
      "certifiedRtp",
      "prizeTiers[2].weight",
    ]);

    const math = sampleParSheet();
    math.certifiedRtp = 0.95;
    math.combinations[0].symbols = ["LEMON"];
    math.combinations[1].tier = "T1";
    math.combinations[1].symbols = ["LEMON", "LEMON", "LEMON"];
    const semantic = await upload(apiKey, math);
    expect(semantic.body.errorCode).toBe("KS-4104");
    expect(semantic.body.details.map((detail: { path: string }) => detail.path)).toEqual([
      "combinations[0].symbols",
      "prizeTiers[2]",
      "certifiedRtp",
    ]);
    const rows = await api.database.db.select().from(parSheets).where(eq(parSheets.partnerId, partnerId));
    expect(rows).toEqual([]);
  });

  it("answers KS-4104 for missing fields and a non-object document, KS-4101 for malformed JSON", async () => {
    const { apiKey } = await api.createPartner();
    const empty = await upload(apiKey, {});
    expect(empty.body.errorCode).toBe("KS-4104");
    expect(empty.body.details.length).toBeGreaterThanOrEqual(7);
    expect((await upload(apiKey, [])).body.errorCode).toBe("KS-4104");
    const malformed = await api.request("/api/partner/v1/par-sheets", {
      method: "POST",
      headers: { "X-API-Key": apiKey, "Content-Type": "application/json" },
      body: "{not json",
    });
    expect([malformed.status, malformed.body.errorCode]).toEqual([400, "KS-4101"]);
  });
});

describe("GET /par-sheets", () => {
  it("lists the caller's sheets newest first, paged", async () => {
    const { apiKey } = await api.createPartner();
    for (const version of ["1", "2", "3"]) await upload(apiKey, { ...SAMPLE_PAR_SHEET, version });
    const first = await api.request("/api/partner/v1/par-sheets?limit=2", { apiKey });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ page: 1, limit: 2, total: 3 });
    expect(first.body.parSheets.map((sheet: { version: string }) => sheet.version)).toEqual(["3", "2"]);
    expect(first.body.parSheets[0].document).toBeUndefined();
    const second = await api.request("/api/partner/v1/par-sheets?limit=2&page=2", { apiKey });
    expect(second.body.parSheets.map((sheet: { version: string }) => sheet.version)).toEqual(["1"]);
    expect((await api.request("/api/partner/v1/par-sheets?limit=101", { apiKey })).body.errorCode).toBe("KS-4101");
  });

  it("hides other partners' and other environments' sheets: 404 KS-4205", async () => {
    const owner = await api.createPartner();
    const other = await api.createPartner();
    const created = await upload(owner.apiKey, SAMPLE_PAR_SHEET);
    const path = `/api/partner/v1/par-sheets/${created.body.id}`;
    expect((await api.request(path, { apiKey: owner.apiKey })).status).toBe(200);
    const foreign = await api.request(path, { apiKey: other.apiKey });
    expect([foreign.status, foreign.body.errorCode]).toEqual([404, "KS-4205"]);
    expect((await api.request("/api/partner/v1/par-sheets", { apiKey: other.apiKey })).body.total).toBe(0);
    const unknown = await api.request("/api/partner/v1/par-sheets/par_nothing", { apiKey: owner.apiKey });
    expect(unknown.body.errorCode).toBe("KS-4205");
  });
});

describe("production sheets and operator decisions", () => {
  it("waits for approval in production; approve → ACTIVE, retire → RETIRED; retired stays retired", async () => {
    const { apiKey } = await api.createPartner({ environment: "production" });
    const created = await upload(apiKey, SAMPLE_PAR_SHEET);
    expect(created.body.status).toBe("PENDING_APPROVAL");
    const sandboxKey = (await api.createPartner()).apiKey;
    const sandboxView = await api.request(`/api/partner/v1/par-sheets/${created.body.id}`, { apiKey: sandboxKey });
    expect(sandboxView.body.errorCode).toBe("KS-4205");

    const approve = `/api/admin/v1/par-sheets/${created.body.id}/approve`;
    const approved = await api.request(approve, { method: "POST", admin: true });
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({ id: created.body.id, status: "ACTIVE", environment: "production" });
    expect(approved.body.approvedAt).not.toBeNull();
    expect((await api.request(approve, { method: "POST", admin: true })).body.status).toBe("ACTIVE");

    const retire = `/api/admin/v1/par-sheets/${created.body.id}/retire`;
    const retired = await api.request(retire, { method: "POST", admin: true });
    expect(retired.body).toMatchObject({ status: "RETIRED" });
    expect(retired.body.retiredAt).not.toBeNull();
    const reapproved = await api.request(approve, { method: "POST", admin: true });
    expect([reapproved.status, reapproved.body.errorCode]).toEqual([400, "KS-4208"]);
    expect((await api.request(`/api/partner/v1/par-sheets/${created.body.id}`, { apiKey })).body.status).toBe(
      "RETIRED",
    );
  });

  it("answers 404 KS-4205 for an unknown sheet and 401 without the operator token", async () => {
    const unknown = await api.request("/api/admin/v1/par-sheets/par_unknown/approve", { method: "POST", admin: true });
    expect([unknown.status, unknown.body.errorCode]).toEqual([404, "KS-4205"]);
    const retire = await api.request("/api/admin/v1/par-sheets/par_unknown/retire", { method: "POST", admin: true });
    expect(retire.body.errorCode).toBe("KS-4205");
    expect((await api.request("/api/admin/v1/par-sheets/par_unknown/approve", { method: "POST" })).status).toBe(401);
  });
});
