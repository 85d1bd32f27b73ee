import { generateApiKey, newId } from "@outcomes/core";
import { apiKeys } from "@outcomes/db";
import { isIssuedKey, updateIssuedKeys } from "@outcomes/queue";
import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import { eventually, startRole } from "@outcomes/testkit/workers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startKeyExpiryRole } from "./index.js";
import { syncIssuedKeys } from "./issued-keys.js";

const DAY_MS = 86_400_000;

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api?.close();
});

/** Keys inserted as a release that does not keep the issued-key set writes them: rows only. */
async function insertKeys(partnerId: string, count: number, state: { expiresAt: Date; revokedAt?: Date }) {
  const rows = Array.from({ length: count }, () => {
    const generated = generateApiKey("sandbox");
    return {
      id: newId("key"),
      partnerId,
      environment: "sandbox" as const,
      keyHash: generated.hash,
      prefix: generated.displayPrefix,
      expiresAt: state.expiresAt,
      revokedAt: state.revokedAt ?? null,
    };
  });
  await api.database.db.insert(apiKeys).values(rows);
  return rows.map((row) => ({ keyHash: row.keyHash, expiresAt: row.expiresAt }));
}

const listed = (keyHash: string) => isIssuedKey(api.deps.redis, api.deps.keys, keyHash, Date.now());
const listedAll = async (keys: Array<{ keyHash: string }>) => Promise.all(keys.map((key) => listed(key.keyHash)));

describe("the issued-key set made whole from Postgres", () => {
  it("lists every live key (past one page), and unlists revoked, expired and unknown hashes", async () => {
    const { partnerId } = await api.createPartner();
    const inAYear = new Date(Date.now() + 365 * DAY_MS);
    const live = await insertKeys(partnerId, 1_005, { expiresAt: inAYear });
    const revoked = await insertKeys(partnerId, 3, { expiresAt: inAYear, revokedAt: new Date() });
    const expired = await insertKeys(partnerId, 3, { expiresAt: new Date(Date.now() - 1000) });
    // Listed once, then revoked or expired behind the set's back; and a hash no row has.
    const stale = { keyHash: "0".repeat(64), expiresAt: inAYear };
    await updateIssuedKeys(api.deps.redis, api.deps.keys, {
      live: [...revoked, ...expired.map((key) => ({ ...key, expiresAt: inAYear })), stale],
    });

    const result = await syncIssuedKeys(api.deps);
    expect(result.listed).toBeGreaterThanOrEqual(live.length);
    expect(result.unlisted).toBeGreaterThanOrEqual(revoked.length + expired.length + 1);
    expect(await listedAll(live)).toEqual(live.map(() => true));
    expect(await listedAll([...revoked, ...expired, stale])).toEqual(Array(7).fill(false));
    // Listed with the row's expiry.
    const score = await api.deps.redis.zscore(api.deps.keys.issuedApiKeys, live[0]!.keyHash);
    expect(Number(score)).toBe(inAYear.getTime());
    // Again: nothing left to unlist.
    expect((await syncIssuedKeys(api.deps)).unlisted).toBe(0);
  });

  it("is done when the key-expiry role starts, and by each sweep", async () => {
    const { partnerId } = await api.createPartner();
    const [older] = await insertKeys(partnerId, 1, { expiresAt: new Date(Date.now() + DAY_MS) });
    expect(await listed(older!.keyHash)).toBe(false);
    const role = await startRole(api, startKeyExpiryRole);
    try {
      expect(await listed(older!.keyHash)).toBe(true);
      const [later] = await insertKeys(partnerId, 1, { expiresAt: new Date(Date.now() + DAY_MS) });
      const run = await api.request("/api/admin/v1/jobs/key-expiry/run", { method: "POST", admin: true });
      expect(run.status).toBe(202);
      await eventually(() => listed(later!.keyHash));
    } finally {
      await role.close();
    }
  });
});
