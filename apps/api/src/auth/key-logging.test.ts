import { createLogger } from "@outcomes/runtime";
import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/** Everything the API logs at the most verbose level, read back as text. */
const lines: string[] = [];
let api: TestApi;
beforeAll(async () => {
  const logger = createLogger("trace", "api-test", { write: (line: string) => lines.push(line) });
  api = await startTestApi({ LOG_LEVEL: "trace" }, { logger });
});
afterAll(async () => {
  await api.close();
});

const admin = (path: string, json?: unknown) =>
  api.request(`/api/admin/v1${path}`, { method: "POST", admin: true, json });

describe("keys never reach the logs", () => {
  it("not when issued, rotated, presented, refused or pasted into a URL", async () => {
    const partner = (await admin("/partners", { slug: "log-check", name: "Log check" })).body;
    const issued = (await admin(`/partners/${partner.id}/api-keys`, { environment: "sandbox" })).body;
    const rotated = (await admin(`/partners/${partner.id}/api-keys/${issued.id}/rotate`, { overlapHours: 1 })).body;
    const keys: string[] = [issued.key, rotated.key];
    expect(keys.every((key) => /^ks_sandbox_/.test(key))).toBe(true);

    await api.request("/api/partner/v1/games", { apiKey: issued.key });
    await api.request(`/api/partner/v1/players/${rotated.key}`, { apiKey: rotated.key });
    await api.request("/api/partner/v1/games", { apiKey: `${issued.key.slice(0, -1)}x` });
    await admin(`/partners/${partner.id}/api-keys/${issued.id}/revoke`);
    await api.request("/api/partner/v1/games", { apiKey: issued.key });
    await api.request(`/api/partner/v1/${issued.key}`, { apiKey: issued.key });

    const logged = lines.join("");
    // The logs are there (requests, paths, statuses), only the secrets are not.
    expect(lines.length).toBeGreaterThanOrEqual(8);
    expect(logged).toContain('"path":"/api/partner/v1/ks_sandbox_[redacted]"');
    expect(logged).toContain('"status":401');
    for (const key of keys) {
      expect(logged).not.toContain(key);
      // Nor the random part on its own (e.g. split by an encoder).
      expect(logged).not.toContain(key.slice("ks_sandbox_".length));
    }
  });
});
