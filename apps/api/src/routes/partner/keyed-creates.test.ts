import { SAMPLE_PAR_SHEET } from "@outcomes/core";
import { games, idempotencyKeys, parSheets } from "@outcomes/db";
import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import { addBlock, createGame } from "@outcomes/testkit/spin-path";
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// Idempotency-Key on POST /games and POST /par-sheets (issue #37, defect 3): the keyed-create
// concern of every create (idempotency.ts), as the spin's and the grant's (CONTRACT §4).

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api.close();
});

/** A create, its body as JSON or as the text given (to send it spelt otherwise). */
const post = (target: TestApi, path: string, apiKey: string, body: unknown, key?: string) =>
  target.request(`/api/partner/v1${path}`, {
    method: "POST",
    apiKey,
    headers: { "Content-Type": "application/json", ...(key === undefined ? {} : { "Idempotency-Key": key }) },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });

async function partnerWithSheet(target: TestApi = api, environment: "sandbox" | "production" = "sandbox") {
  const partner = await target.createPartner({ environment });
  const sheet = await post(target, "/par-sheets", partner.apiKey, SAMPLE_PAR_SHEET);
  return { ...partner, parSheetId: sheet.body.id as string };
}

const gamesOf = (partnerId: string) => api.database.db.select().from(games).where(eq(games.partnerId, partnerId));
const sheetsOf = (target: TestApi, partnerId: string) =>
  target.database.db.select().from(parSheets).where(eq(parSheets.partnerId, partnerId));
const recordsOf = (partnerId: string, key: string) =>
  api.database.db
    .select()
    .from(idempotencyKeys)
    .where(and(eq(idempotencyKeys.partnerId, partnerId), eq(idempotencyKeys.key, key)));

function expectOtherRequest(answer: { status: number; body: any }) {
  expect(answer.status).toBe(400);
  expect(answer.body.errorCode).toBe("KS-4101");
  expect(answer.body.message).toMatch(/Idempotency-Key was already used for another request/);
}

describe("POST /games with Idempotency-Key", () => {
  it("answers a repeat with the first game (Idempotent-Replayed) and registers one", async () => {
    const { partnerId, apiKey, parSheetId } = await partnerWithSheet();
    const body = { parSheetId, name: "Sevens", minWagerUsd: 0.1, maxWagerUsd: 5 };
    const first = await post(api, "/games", apiKey, body, "game-1");
    expect(first.status).toBe(201);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    // The same game as understood: 5 and 5.0 are one amount, the fields in another order.
    const respelt = `{"maxWagerUsd":5.0,"name":"Sevens",\n "parSheetId":"${parSheetId}","minWagerUsd":0.10}`;
    const repeat = await post(api, "/games", apiKey, respelt, "game-1");
    expect(repeat.status).toBe(201);
    expect(repeat.headers.get("idempotent-replayed")).toBe("true");
    expect(repeat.body).toEqual(first.body);
    expect(Object.keys(repeat.body)).toEqual(Object.keys(first.body));
    expect(await gamesOf(partnerId)).toHaveLength(1);
  });

  it("refuses the key with another body (400 KS-4101) or a spin's key, and registers nothing", async () => {
    const { partnerId, apiKey, parSheetId } = await partnerWithSheet();
    await post(api, "/games", apiKey, { parSheetId, name: "Sevens", maxWagerUsd: 5 }, "game-2");
    expectOtherRequest(await post(api, "/games", apiKey, { parSheetId, name: "Sevens", maxWagerUsd: 6 }, "game-2"));
    expectOtherRequest(await post(api, "/games", apiKey, { parSheetId, name: "Other", maxWagerUsd: 5 }, "game-2"));
    // One key space per partner and environment: a spin sent with a game's key is another request.
    const [game] = await gamesOf(partnerId);
    expectOtherRequest(await post(api, "/spins", apiKey, { gameId: game!.id, playerId: "p-1", wagerUsd: 1 }, "game-2"));
    expect(await gamesOf(partnerId)).toHaveLength(1);
  });

  it("makes one game of concurrent duplicates, and answers each with it", async () => {
    const { partnerId, apiKey, parSheetId } = await partnerWithSheet();
    const body = { parSheetId, name: "Raced", maxWagerUsd: 5 };
    const answers = await Promise.all(Array.from({ length: 6 }, () => post(api, "/games", apiKey, body, "game-3")));
    expect(answers.map((answer) => answer.status)).toEqual(Array(6).fill(201));
    expect(new Set(answers.map((answer) => answer.body.gameConfigId)).size).toBe(1);
    expect(answers.filter((answer) => answer.headers.get("idempotent-replayed") === "true")).toHaveLength(5);
    expect(await gamesOf(partnerId)).toHaveLength(1);
  });

  it("leaves no record when the create fails, so its retry runs anew", async () => {
    const { partnerId, apiKey, parSheetId } = await partnerWithSheet(api, "production");
    const body = { parSheetId, name: "Pending", maxWagerUsd: 5 };
    const refused = await post(api, "/games", apiKey, body, "game-4");
    expect(refused.status).toBe(400);
    expect(refused.body.errorCode).toBe("KS-4208");
    expect(await recordsOf(partnerId, "game-4")).toEqual([]);
    await api.request(`/api/admin/v1/par-sheets/${parSheetId}/approve`, { method: "POST", admin: true });
    const retried = await post(api, "/games", apiKey, body, "game-4");
    expect(retried.status).toBe(201);
    expect(retried.headers.get("idempotent-replayed")).toBeNull();
    expect(await recordsOf(partnerId, "game-4")).toHaveLength(1);
  });

  it("answers a replay after the sheet was retired, before any rule runs", async () => {
    const { apiKey, parSheetId } = await partnerWithSheet();
    const body = { parSheetId, name: "Retiring", maxWagerUsd: 5 };
    const first = await post(api, "/games", apiKey, body, "game-5");
    await api.request(`/api/admin/v1/par-sheets/${parSheetId}/retire`, { method: "POST", admin: true });
    const unkeyed = await post(api, "/games", apiKey, { ...body, name: "Another" });
    expect(unkeyed.body.errorCode).toBe("KS-4208");
    const replay = await post(api, "/games", apiKey, body, "game-5");
    expect(replay.status).toBe(201);
    expect(replay.body).toEqual(first.body);
  });

  it("refuses an empty or over-long key with 400 KS-4101 and registers nothing", async () => {
    const { partnerId, apiKey, parSheetId } = await partnerWithSheet();
    for (const key of ["", "   ", "k".repeat(256)]) {
      const answer = await post(api, "/games", apiKey, { parSheetId, name: "Keyless", maxWagerUsd: 5 }, key);
      expect(answer.status).toBe(400);
      expect(answer.body.errorCode).toBe("KS-4101");
    }
    expect(await gamesOf(partnerId)).toHaveLength(0);
  });
});

describe("POST /par-sheets with Idempotency-Key", () => {
  it("answers the same document (whitespace and key order aside) with the first sheet, as first answered", async () => {
    const { partnerId, apiKey } = await api.createPartner();
    const first = await post(api, "/par-sheets", apiKey, SAMPLE_PAR_SHEET, "sheet-1");
    expect(first.status).toBe(201);
    expect(first.body.status).toBe("ACTIVE");
    const { name, ...rest } = SAMPLE_PAR_SHEET;
    const reordered = JSON.stringify({ ...rest, name }, null, 2);
    const retired = await api.request(`/api/admin/v1/par-sheets/${first.body.id}/retire`, {
      method: "POST",
      admin: true,
    });
    expect(retired.body.status).toBe("RETIRED");
    const repeat = await post(api, "/par-sheets", apiKey, reordered, "sheet-1");
    expect(repeat.status).toBe(201);
    expect(repeat.headers.get("idempotent-replayed")).toBe("true");
    expect(repeat.body).toEqual(first.body);
    expect(await sheetsOf(api, partnerId)).toHaveLength(1);
  });

  it("refuses the key with another document (400 KS-4101), and makes one sheet of concurrent duplicates", async () => {
    const { partnerId, apiKey } = await api.createPartner();
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => post(api, "/par-sheets", apiKey, SAMPLE_PAR_SHEET, "sheet-2")),
    );
    expect(answers.map((answer) => answer.status)).toEqual(Array(5).fill(201));
    expect(new Set(answers.map((answer) => answer.body.id)).size).toBe(1);
    expectOtherRequest(await post(api, "/par-sheets", apiKey, { ...SAMPLE_PAR_SHEET, version: "2.0" }, "sheet-2"));
    expect(await sheetsOf(api, partnerId)).toHaveLength(1);
  });

  it("leaves no record for a refused document; the key then makes the corrected one", async () => {
    const { partnerId, apiKey } = await api.createPartner();
    const wrong = await post(api, "/par-sheets", apiKey, { ...SAMPLE_PAR_SHEET, certifiedRtp: 0.5 }, "sheet-3");
    expect(wrong.body.errorCode).toBe("KS-4104");
    expect(await recordsOf(partnerId, "sheet-3")).toEqual([]);
    const right = await post(api, "/par-sheets", apiKey, SAMPLE_PAR_SHEET, "sheet-3");
    expect(right.status).toBe(201);
    expect(await sheetsOf(api, partnerId)).toHaveLength(1);
  });
});

describe("POST /webhooks and POST /spins/{spinId}/replay-link with Idempotency-Key", () => {
  it("registers one webhook per key, answering a repeat (events in another order) with it and its secret", async () => {
    const { partnerId, apiKey } = await api.createPartner();
    const url = "https://hooks.partner.test/outcomes";
    const first = await post(
      api,
      "/webhooks",
      apiKey,
      { url, events: ["spin.large_win", "block.low_reserve"] },
      "hook",
    );
    expect(first.status).toBe(201);
    const repeats = await Promise.all(
      Array.from({ length: 3 }, () =>
        post(api, "/webhooks", apiKey, { url, events: ["block.low_reserve", "spin.large_win"] }, "hook"),
      ),
    );
    for (const repeat of repeats) {
      expect([repeat.status, repeat.headers.get("idempotent-replayed")]).toEqual([201, "true"]);
      expect(repeat.body).toEqual(first.body);
    }
    expect(first.body.secret).toMatch(/^whsec_/);
    expectOtherRequest(
      await post(api, "/webhooks", apiKey, { url: `${url}/other`, events: ["spin.large_win"] }, "hook"),
    );
    const listed = await api.request("/api/partner/v1/webhooks", { apiKey });
    expect(listed.body.webhooks.map((hook: { id: string }) => hook.id)).toEqual([first.body.id]);
    expect(await recordsOf(partnerId, "hook")).toHaveLength(1);
  });

  it("answers a repeated replay link request with the first link", async () => {
    const { apiKey, partnerId } = await api.createPartner();
    const game = await createGame(api, partnerId);
    await addBlock(api, game.gameId, [["T0", 0]]);
    const spun = await api.request("/api/partner/v1/spins", {
      method: "POST",
      apiKey,
      json: { gameId: game.gameId, playerId: "p-1", wagerUsd: 1 },
    });
    const path = `/spins/${spun.body.spinId}/replay-link`;
    const first = await post(api, path, apiKey, { expiresInHours: 24 }, "link");
    const repeat = await post(api, path, apiKey, { expiresInHours: 24 }, "link");
    expect([first.status, repeat.status, repeat.headers.get("idempotent-replayed")]).toEqual([201, 201, "true"]);
    expect(repeat.body).toEqual(first.body);
    expectOtherRequest(await post(api, path, apiKey, { expiresInHours: 48 }, "link"));
  });
});

describe("while release 2 may still run beside it (the keyed-creates gate closed)", () => {
  let running: TestApi;
  beforeAll(async () => {
    running = await startTestApi({}, { rollout: "running" });
  });
  afterAll(async () => {
    await running?.close();
  });

  it("ignores Idempotency-Key on creates, as release 2 does, and keeps it on grants", async () => {
    const { partnerId, apiKey, parSheetId } = await partnerWithSheet(running);
    const sheets = await Promise.all([
      post(running, "/par-sheets", apiKey, SAMPLE_PAR_SHEET, "sheet"),
      post(running, "/par-sheets", apiKey, SAMPLE_PAR_SHEET, "sheet"),
    ]);
    expect(sheets.map((answer) => answer.headers.get("idempotent-replayed"))).toEqual([null, null]);
    expect(await sheetsOf(running, partnerId)).toHaveLength(3);
    const body = { parSheetId, name: "Twice", maxWagerUsd: 5 };
    expect((await post(running, "/games", apiKey, body, "game")).status).toBe(201);
    expect((await post(running, "/games", apiKey, body, "game")).body.errorCode).toBe("KS-4108");
    // Not even checked: release 2 takes any header.
    expect((await post(running, "/games", apiKey, { ...body, name: "Empty key" }, "")).status).toBe(201);
  });
});
