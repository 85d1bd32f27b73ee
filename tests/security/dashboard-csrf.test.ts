import { startTestApi, TEST_ADMIN_TOKEN, type TestApi } from "@outcomes/testkit/api";
import { eventually } from "@outcomes/testkit/workers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DASHBOARD_BASE } from "../../apps/api/src/dashboard.js";
import { send } from "./probe.js";

/**
 * The queue dashboard takes no cross-site writes (issue 38, item 1). Browsers re-send the
 * dashboard's basic auth with any page's form or fetch, and Bull Board reads any body as JSON: a
 * page an operator opened could add jobs with any BullMQ options to any queue. Every request that
 * is not GET or HEAD must come from the dashboard's own origin, and a body must be JSON.
 */
let api: TestApi;
let host = "";
beforeAll(async () => {
  api = await startTestApi();
  host = new URL(api.baseUrl).host;
  // Each BullMQ Queue writes its meta key once ready, after the API has started: wait for them, or
  // the first test's "before" could miss one that its "after" sees.
  const queues = Object.values(api.deps.producers.queues);
  await eventually(async () =>
    (await Promise.all(queues.map((queue) => api.deps.redis.exists(queue.toKey("meta"))))).every(Boolean),
  );
});
afterAll(async () => {
  await api?.close();
});

const BASIC = `Basic ${Buffer.from(`ops:${TEST_ADMIN_TOKEN}`).toString("base64")}`;
const ADD_JOB = `${DASHBOARD_BASE}/api/queues/settlements/add`;
/** What the reported attack sent: a repeat schedule that outlives the request. */
const SCHEDULE = JSON.stringify({
  name: "settlements.generate",
  data: { partnerId: "ptr_any", reportDate: "2026-01-01" },
  options: { repeat: { every: 60_000 } },
});

/** Every key of the deployment's BullMQ prefix and every queue's job counts. */
async function queueState() {
  // A Set: SCAN may return a key twice while other tests' keys make Redis rehash.
  const keys = new Set<string>();
  let cursor = "0";
  do {
    const [next, found] = await api.deps.redis.scan(cursor, "MATCH", `${api.deps.keys.bull}*`, "COUNT", 1000);
    cursor = next;
    for (const key of found) keys.add(key);
  } while (cursor !== "0");
  const counts = await Promise.all(Object.values(api.deps.producers.queues).map((queue) => queue.getJobCounts()));
  return { keys: [...keys].sort(), counts };
}

const post = (headers: Record<string, string>, body = SCHEDULE) =>
  send(api, { method: "POST", url: ADD_JOB, headers: { Authorization: BASIC, ...headers }, body });

describe("dashboard writes come from the dashboard's own origin", () => {
  it("refuses a cross-site form-shaped request with the operator's credentials, adding nothing", async () => {
    const before = await queueState();
    const forged = await post({ "Content-Type": "text/plain", Origin: "https://evil.example" });
    expect([forged.status, forged.body?.errorCode]).toEqual([403, "KS-4007"]);
    expect(forged.body.requestId).toBe(forged.headers.get("x-request-id"));
    expect(await queueState()).toEqual(before);
  });

  const json = { "Content-Type": "application/json" };
  it.each([
    [
      "a form post seen only by Sec-Fetch-Site",
      () => ({ "Content-Type": "text/plain", "Sec-Fetch-Site": "cross-site" }),
    ],
    ["JSON from another origin", () => ({ ...json, Origin: "https://evil.example" })],
    ["JSON from a sibling site", () => ({ ...json, "Sec-Fetch-Site": "same-site" })],
    ["an opaque origin", () => ({ ...json, Origin: "null" })],
    [
      "this origin in a cross-site fetch",
      () => ({ ...json, Origin: `http://${host}`, "Sec-Fetch-Site": "cross-site" }),
    ],
    ["this host on another port", () => ({ ...json, Origin: "http://127.0.0.1:1" })],
  ])("refuses %s: 403 KS-4007, nothing added", async (_, headers: () => Record<string, string>) => {
    const before = await queueState();
    const answer = await post(headers());
    expect([answer.status, answer.body?.errorCode]).toEqual([403, "KS-4007"]);
    expect(await queueState()).toEqual(before);
  });

  it("refuses a body that is not JSON even without Origin (a form a browser lost the Origin of): 400 KS-4101", async () => {
    const before = await queueState();
    for (const type of ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"]) {
      const answer = await post({ "Content-Type": type });
      expect([answer.status, answer.body?.errorCode], type).toEqual([400, "KS-4101"]);
    }
    const typeless = await post({});
    expect([typeless.status, typeless.body?.errorCode]).toEqual([400, "KS-4101"]);
    expect(await queueState()).toEqual(before);
  });

  it("takes a same-origin JSON request from the board, and a script's JSON without Origin", async () => {
    const queue = api.deps.producers.queues["key-expiry"];
    const add = (headers: Record<string, string>) =>
      send(api, {
        method: "POST",
        url: `${DASHBOARD_BASE}/api/queues/key-expiry/add`,
        headers: { Authorization: BASIC, "Content-Type": "application/json", ...headers },
        body: JSON.stringify({ name: "key-expiry.sweep", data: {} }),
      });
    const before = (await queue.getJobCounts()).waiting ?? 0;
    const fromBoard = await add({ Origin: `http://${host}`, "Sec-Fetch-Site": "same-origin" });
    expect(fromBoard.status, fromBoard.text).toBe(200);
    expect(fromBoard.body.job.name).toBe("key-expiry.sweep");
    const fromScript = await add({});
    expect(fromScript.status, fromScript.text).toBe(200);
    expect((await queue.getJobCounts()).waiting).toBe(before + 2);
    await queue.drain();
  });

  it("takes the board's own buttons: bodyless PUTs with no Content-Type from its origin", async () => {
    const press = (button: "pause" | "resume") =>
      send(api, {
        method: "PUT",
        url: `${DASHBOARD_BASE}/api/queues/key-expiry/${button}`,
        headers: { Authorization: BASIC, Origin: `http://${host}`, "Sec-Fetch-Site": "same-origin" },
      });
    const pause = await press("pause");
    expect(pause.status, pause.text).toBe(200);
    expect(await api.deps.producers.queues["key-expiry"].isPaused()).toBe(true);
    const resume = await press("resume");
    expect(resume.status, resume.text).toBe(200);
    expect(await api.deps.producers.queues["key-expiry"].isPaused()).toBe(false);
  });
});
