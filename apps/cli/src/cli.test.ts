import { hashApiKey } from "@outcomes/core";
import { cliAgainst } from "@outcomes/testkit/cli";
import { testApiForFile } from "@outcomes/testkit/file-fixture";
import { describe, expect, it } from "vitest";
import { run } from "./program.js";

/**
 * The CLI runs in-process against the database and Redis prefix of a real API instance, so every
 * test also proves that the API sees what the CLI changed (within 1 s, through the same pub/sub).
 */
const api = testApiForFile();

const { cli, cliJson } = cliAgainst(() => api);
/** The API's verdict on a key, polled until `expected` or 1 s: 404 KS-4215 means it was accepted. */
async function apiVerdict(apiKey: string, expected: string) {
  const started = Date.now();
  let seen = "";
  do {
    seen = (await api.request("/api/partner/v1/no-such-route", { apiKey })).body.errorCode;
    if (seen === expected) break;
    await new Promise((resolve) => setTimeout(resolve, 10));
  } while (Date.now() - started < 1000);
  return seen;
}
let counter = 0;
async function newPartner() {
  counter += 1;
  return cliJson("partners", "create", "--slug", `cli-${counter}`, "--name", `CLI ${counter}`);
}

describe("--help", () => {
  it.each([
    "",
    "partners",
    "partners create",
    "partners list",
    "partners deactivate",
    "partners activate",
    "keys",
    "keys issue",
    "keys list",
    "keys revoke",
    "keys rotate",
    "maintenance",
    "maintenance on",
    "maintenance off",
    "maintenance status",
  ])("works on %j without touching the services", async (path) => {
    let stdout = "";
    const code = await run([...path.split(" ").filter(Boolean), "--help"], {
      env: { DATABASE_URL: "postgres://nobody@127.0.0.1:1/none", REDIS_URL: "redis://127.0.0.1:1" },
      stdout: (text) => {
        stdout += text;
      },
      stderr: (text) => expect.fail(text),
    });
    expect(code).toBe(0);
    expect(stdout).toContain(`Usage: npm run cli -- ${path}`.trimEnd());
    expect(stdout).toContain("--json");
  });

  it("refuses an unknown command or a missing option with status 1 and a usage message", async () => {
    const unknown = await cli("partners", "delete");
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("unknown command 'delete'");
    const missing = await cli("keys", "issue", "ptr_x");
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("--environment");
    const badChoice = await cli("keys", "issue", "ptr_x", "--environment", "staging");
    expect([badChoice.code, badChoice.stderr.includes("staging")]).toEqual([1, true]);
  });
});

describe("partners", () => {
  it("creates a partner (table and JSON) and refuses a taken slug or a bad one", async () => {
    const table = await cli(
      "partners",
      "create",
      "--slug",
      "cli-table",
      "--name",
      "CLI Table",
      "--contact-email",
      "ops@cli.example",
    );
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/slug\s+cli-table/);
    expect(table.stdout).toMatch(/contactEmail\s+ops@cli\.example/);

    const created = await cliJson("partners", "create", "--slug", "cli-json", "--name", "CLI Json");
    expect(created).toMatchObject({ slug: "cli-json", name: "CLI Json", contactEmail: null, isActive: true });

    const taken = await cli("partners", "create", "--slug", "cli-json", "--name", "Again");
    expect([taken.code, taken.stderr]).toEqual([
      1,
      "error KS-4211: Partner with this slug already exists\n  slug: taken\n",
    ]);
    const bad = await cli("partners", "create", "--slug", "Not_A_Slug", "--name", "Bad", "--json");
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stderr)).toMatchObject({ errorCode: "KS-4101", details: [{ path: "slug" }] });
  });

  it("lists what the operator API lists", async () => {
    await newPartner();
    const listed = await cliJson("partners", "list", "--limit", "100");
    const fromApi = await api.request("/api/admin/v1/partners?limit=100", { admin: true });
    expect(listed).toEqual(fromApi.body);
    const table = await cli("partners", "list", "--limit", "2");
    expect(table.stdout).toMatch(/^ID\s+SLUG\s+NAME\s+ACTIVE\s+CONTACT EMAIL\s+CREATED AT\n/);
    expect(table.stdout).toContain(`page 1 of ${Math.ceil(listed.total / 2)}, 2 shown, ${listed.total} in total`);
    expect((await cli("partners", "list", "--limit", "101")).code).toBe(1);
  });

  it("deactivates and re-activates, and the API follows", async () => {
    const partner = await newPartner();
    const key = await cliJson("keys", "issue", partner.id, "--environment", "production");
    expect(await apiVerdict(key.key, "KS-4215")).toBe("KS-4215");
    expect((await cliJson("partners", "deactivate", partner.id)).isActive).toBe(false);
    expect(await apiVerdict(key.key, "KS-4005")).toBe("KS-4005");
    const refused = await cli("keys", "issue", partner.id, "--environment", "sandbox");
    expect([refused.code, refused.stderr]).toEqual([1, "error KS-4210: Partner is deactivated\n"]);
    expect((await cliJson("partners", "activate", partner.id)).isActive).toBe(true);
    expect(await apiVerdict(key.key, "KS-4215")).toBe("KS-4215");
    expect((await cli("partners", "activate", "ptr_unknown")).stderr).toBe("error KS-4209: Partner not found\n");
  });

  it("sets and restores a partner's spin ceiling, as the operator API shows it", async () => {
    const partner = await newPartner();
    expect(partner.spinCeilingUsd).toBe(1_000_000);
    const raised = await cliJson("partners", "update", partner.id, "--spin-ceiling-usd", "5000000.25");
    expect(raised).toMatchObject({ id: partner.id, spinCeilingUsd: 5_000_000.25 });
    const listed = await api.request("/api/admin/v1/partners?limit=100", { admin: true });
    expect(listed.body.partners.find((p: { id: string }) => p.id === partner.id).spinCeilingUsd).toBe(5_000_000.25);
    const table = await cli("partners", "update", partner.id, "--spin-ceiling-usd", "default");
    expect(table.stdout).toMatch(/spinCeilingUsd\s+1000000\n/);
    for (const bad of ["0", "1.0000001", "9007199254.75", "lots"]) {
      expect((await cli("partners", "update", partner.id, "--spin-ceiling-usd", bad)).code, bad).toBe(1);
    }
  });
});

describe("keys", () => {
  it("issues a working key, lists it without its secret, revokes it everywhere", async () => {
    const partner = await newPartner();
    const issued = await cli("keys", "issue", partner.id, "--environment", "sandbox");
    expect(issued.code).toBe(0);
    const key = /key\s+(ks_sandbox_\S+)/.exec(issued.stdout)?.[1] ?? "";
    const keyId = /id\s+(key_\S+)/.exec(issued.stdout)?.[1] ?? "";
    expect(issued.stdout).toContain("shown only once");
    expect(await apiVerdict(key, "KS-4215")).toBe("KS-4215");

    const listed = await cli("keys", "list", partner.id);
    expect(listed.stdout).toMatch(new RegExp(`${keyId}\\s+ks_sandbox_\\w{4}\\s+sandbox\\s+active`));
    expect(listed.stdout).not.toContain(key);
    const fromApi = await api.request(`/api/admin/v1/partners/${partner.id}/api-keys`, { admin: true });
    expect(await cliJson("keys", "list", partner.id)).toEqual(fromApi.body);

    const warmedAt = Date.now();
    expect(await apiVerdict(key, "KS-4215")).toBe("KS-4215");
    const revoked = await cliJson("keys", "revoke", partner.id, keyId);
    expect(revoked).toMatchObject({ id: keyId, revokedAt: expect.any(String) });
    expect(await apiVerdict(key, "KS-4003")).toBe("KS-4003");
    // Sooner than the API's 1-s cache bound: the CLI's invalidation reached the API process.
    expect(Date.now() - warmedAt).toBeLessThan(1000);
    expect((await cli("keys", "list", partner.id)).stdout).toMatch(new RegExp(`${keyId}.*revoked`));
  });

  it("rotates: a new key of the same environment, the old one cut to the overlap", async () => {
    const partner = await newPartner();
    const old = await cliJson(
      "keys",
      "issue",
      partner.id,
      "--environment",
      "production",
      "--expires-at",
      "2099-01-01T00:00:00Z",
    );
    expect(old.expiresAt).toBe("2099-01-01T00:00:00.000Z");
    const rotated = await cli("keys", "rotate", partner.id, old.id, "--overlap-hours", "0");
    expect(rotated.code).toBe(0);
    expect(rotated.stdout).toContain(`The old key ${old.id} now expires at`);
    const newKey = /key\s+(kp_prod_\S+)/.exec(rotated.stdout)?.[1] ?? "";
    expect(await apiVerdict(old.key, "KS-4004")).toBe("KS-4004");
    expect(await apiVerdict(newKey, "KS-4215")).toBe("KS-4215");

    const json = await cliJson("keys", "rotate", partner.id, old.id);
    expect(json).toMatchObject({ environment: "production", key: expect.stringMatching(/^kp_prod_/) });
  });

  it("keeps the issued-key set as it issues, rotates and revokes", async () => {
    const listedExpiry = async (apiKey: string) => {
      const score = await api.deps.redis.zscore(api.deps.keys.issuedApiKeys, hashApiKey(apiKey));
      return score === null ? null : new Date(Number(score)).toISOString();
    };
    const partner = await newPartner();
    const old = await cliJson("keys", "issue", partner.id, "--environment", "sandbox");
    expect(await listedExpiry(old.key)).toBe(old.expiresAt);

    const rotated = await cliJson("keys", "rotate", partner.id, old.id, "--overlap-hours", "2");
    const keys = (await cliJson("keys", "list", partner.id)).apiKeys as Array<{ id: string; expiresAt: string }>;
    expect(await listedExpiry(rotated.key)).toBe(rotated.expiresAt);
    expect(await listedExpiry(old.key)).toBe(keys.find((key) => key.id === old.id)?.expiresAt);

    await cliJson("keys", "revoke", partner.id, rotated.id);
    expect(await listedExpiry(rotated.key)).toBeNull();
  });

  it("reports the contract's codes", async () => {
    const owner = await newPartner();
    const other = await newPartner();
    const key = await cliJson("keys", "issue", owner.id, "--environment", "sandbox");
    const cases: Array<[string[], string]> = [
      [["keys", "revoke", other.id, key.id], "KS-4213"],
      [["keys", "revoke", owner.id, "key_unknown"], "KS-4212"],
      [["keys", "rotate", owner.id, key.id, "--overlap-hours", "-1"], "KS-4101"],
      [["keys", "issue", owner.id, "--environment", "sandbox", "--expires-at", "2001-01-01T00:00:00Z"], "KS-4101"],
      [["keys", "list", "ptr_unknown"], "KS-4209"],
    ];
    for (const [argv, code] of cases) {
      const result = await cli(...argv);
      expect([result.code, result.stderr.split(":")[0]]).toEqual([1, `error ${code}`]);
    }
    expect((await cli("keys", "issue", owner.id, "--environment", "sandbox", "--expires-at", "soon")).code).toBe(1);
  });
});

describe("maintenance", () => {
  it("turns partner calls off and on for the API, and reports the state", async () => {
    const partner = await newPartner();
    const key = await cliJson("keys", "issue", partner.id, "--environment", "sandbox");
    expect(await cliJson("maintenance", "status")).toEqual({ enabled: false });
    const on = await cli("maintenance", "on");
    expect([on.code, on.stdout]).toEqual([
      0,
      "Maintenance mode is ON: partner calls answer 503 KS-5002 (Retry-After: 60).\n",
    ]);
    expect(await apiVerdict(key.key, "KS-5002")).toBe("KS-5002");
    expect((await api.request("/api/admin/v1/maintenance", { admin: true })).body).toEqual({ enabled: true });
    expect(await cliJson("maintenance", "status")).toEqual({ enabled: true });
    expect(await cliJson("maintenance", "off")).toEqual({ enabled: false });
    expect(await apiVerdict(key.key, "KS-4215")).toBe("KS-4215");
  });
});

describe("configuration", () => {
  it.each([
    ["names a bad variable", ["partners", "list"], { DATABASE_URL: "not a url" }, /DATABASE_URL/],
    [
      "says so when Redis cannot be reached",
      ["maintenance", "status"],
      { REDIS_URL: "redis://127.0.0.1:1" },
      /^error: cannot reach Redis: .*ECONNREFUSED/,
    ],
    [
      "says so when Postgres cannot be reached",
      ["partners", "list"],
      { DATABASE_URL: "postgres://postgres@127.0.0.1:1/none" },
      /^error: .*ECONNREFUSED/,
    ],
  ])("%s and stops with status 1", async (_case, args, env, message) => {
    let stderr = "";
    const code = await run(args, {
      env,
      stdout: () => {},
      stderr: (text) => {
        stderr += text;
      },
    });
    expect(code).toBe(1);
    expect(stderr).toMatch(message);
  });
});
