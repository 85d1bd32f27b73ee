import type { Environment, HostResolver } from "@outcomes/core";
import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectHarmless } from "./probe.js";
import { testResolver } from "./world.js";

/**
 * Webhook URLs that would make the service call into its own network, or smuggle headers, are
 * refused at registration with 400 KS-4106 and store nothing (issue 8, item 6; CONTRACT §7).
 * Deliveries resolve and vet again before connecting (apps/worker/src/webhooks/ssrf.test.ts).
 * `*.internal.test` resolves to 10.1.2.3 here; other names to a public address.
 */
let api: TestApi;
const keys = {} as Record<Environment, string>;

beforeAll(async () => {
  api = await startTestApi();
  api.deps.resolveHost = testResolver;
  keys.sandbox = (await api.createPartner({ environment: "sandbox" })).apiKey;
  keys.production = (await api.createPartner({ environment: "production" })).apiKey;
});
afterAll(async () => {
  await api?.close();
});

const REFUSED_EVERYWHERE = [
  "https://10.0.0.1/hook",
  "https://172.16.5.4/hook",
  "https://192.168.1.1/hook",
  "https://169.254.169.254/latest/meta-data",
  "https://100.64.0.1/hook",
  "https://0.0.0.0/hook",
  "https://[fd00::1]/hook",
  "https://[fe80::1]/hook",
  "https://[::ffff:10.0.0.1]/hook",
  "https://[::ffff:127.0.0.1]/hook",
  "https://[::]/hook",
  "https://api.localhost/hook",
  "https://localhost./hook",
  "https://hooks.internal.test/hook",
  "http://hooks.example.com/hook",
  "ftp://hooks.example.com/hook",
  "file:///etc/passwd",
  "javascript:alert(1)",
  "gopher://127.0.0.1:6379/_FLUSHALL",
  "https://user:password@hooks.example.com/hook",
  "https://hooks.example.com/a\r\nX-Injected: yes",
  "https://hooks.example.com/a\nX-Injected: yes",
  "https://hooks.example.com/a\rb",
  "https://hooks.example.com/a b",
  "https://hooks.example.com/\ta",
  "https://hooks.example.com\u2028/a",
  "//hooks.example.com/hook",
  "hooks.example.com/hook",
  `https://hooks.example.com/${"a".repeat(2100)}`,
];

/**
 * Loopback is a sandbox convenience only (plain http allowed there). The URL parser turns 127.1,
 * 2130706433, 0x7f.0.0.1 and 017700000001 into 127.0.0.1, so they are loopback forms too.
 */
const SANDBOX_ONLY = [
  "http://localhost:8080/hook",
  "http://127.0.0.1:9/hook",
  "http://[::1]:9/hook",
  "https://localhost/hook",
  "https://127.1/hook",
  "https://2130706433/hook",
  "https://0x7f.0.0.1/hook",
  "https://017700000001/hook",
];

async function register(environment: Environment, url: string) {
  const json = JSON.stringify({ url, events: ["spin.large_win"] });
  return expectHarmless(
    api,
    { method: "POST", url: "/api/partner/v1/webhooks", headers: { "Content-Type": "application/json" }, body: json },
    keys[environment],
  );
}

describe("webhook URLs that reach inward are refused", () => {
  it.each(["sandbox", "production"] as const)(
    "%s: private, loopback, odd schemes and injections: KS-4106",
    async (environment) => {
      for (const url of REFUSED_EVERYWHERE) {
        const answer = await register(environment, url);
        expect([answer.status, answer.body.errorCode], JSON.stringify(url)).toEqual([400, "KS-4106"]);
      }
    },
  );

  it("production refuses the sandbox loopback forms; sandbox accepts them", async () => {
    for (const url of SANDBOX_ONLY) {
      const refused = await register("production", url);
      expect([refused.status, refused.body.errorCode], url).toEqual([400, "KS-4106"]);
      expect((await register("sandbox", url)).status, url).toBe(201);
    }
  });

  it("a public https URL is accepted in both environments", async () => {
    for (const environment of ["sandbox", "production"] as const) {
      expect((await register(environment, "https://hooks.example.com/outcomes")).status).toBe(201);
    }
  });
});

describe("a refusal never says how a name resolves (issue 38, item 4)", () => {
  /** A deployment's internal names, as its DNS would answer them. */
  const internal: Record<string, string[]> = {
    vm: ["127.0.0.1"],
    "db.corp": ["10.20.0.5"],
    "metadata.corp": ["169.254.169.254"],
    "v6.corp": ["fd12::7"],
    "mixed.corp": ["93.184.216.34", "192.168.7.7"],
    "nothing.corp": [],
  };
  const resolver: HostResolver = async (host) =>
    (internal[host] ?? ["93.184.216.34"]).map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));

  it.each(["production", "sandbox"] as const)(
    "%s: names resolving inward, inward literals and localhost names get one and the same answer",
    async (environment) => {
      const saved = api.deps.resolveHost;
      api.deps.resolveHost = resolver;
      try {
        const urls = [
          ...Object.keys(internal).map((host) => `https://${host}/hook`),
          "https://10.0.0.1/hook",
          "https://[::ffff:127.0.0.1]/hook",
          "https://api.localhost/hook",
        ];
        const answers = [];
        for (const url of urls) {
          const answer = await register(environment, url);
          expect([answer.status, answer.body.errorCode], url).toEqual([400, "KS-4106"]);
          answers.push({ message: answer.body.message, details: answer.body.details });
        }
        expect(answers[0]).toEqual({
          message: "Invalid webhook URL",
          details: [{ path: "url", message: "must resolve to a public address" }],
        });
        for (const [index, answer] of answers.entries()) expect(answer, urls[index]).toEqual(answers[0]);
      } finally {
        api.deps.resolveHost = saved;
      }
    },
  );
});

describe("SANDBOX_LOOPBACK_PORTS (issue 38, item 5)", () => {
  /** A registration on `target` with a fresh sandbox key. */
  async function registerOn(target: TestApi, url: string) {
    const { apiKey } = await target.createPartner({ environment: "sandbox" });
    return target.request("/api/partner/v1/webhooks", {
      method: "POST",
      apiKey,
      json: { url, events: ["spin.large_win"] },
    });
  }

  it("listed: sandbox loopback URLs take those ports only (the scheme's default port counts as itself)", async () => {
    const listed = await startTestApi({ SANDBOX_LOOPBACK_PORTS: "8080,443" }, { shareWith: api });
    listed.deps.resolveHost = testResolver;
    try {
      for (const url of ["http://localhost:8080/hook", "http://[::1]:8080/", "https://127.0.0.1/hook"]) {
        expect((await registerOn(listed, url)).status, url).toBe(201);
      }
      for (const url of [
        "http://127.0.0.1:5432/",
        "http://localhost:6379/",
        "http://localhost/hook",
        "https://127.1:3000/",
      ]) {
        const refused = await registerOn(listed, url);
        expect([refused.status, refused.body.errorCode], url).toEqual([400, "KS-4106"]);
        expect(refused.body.details, url).toEqual([
          { path: "url", message: "loopback webhooks may use only ports 8080, 443 here (SANDBOX_LOOPBACK_PORTS)" },
        ]);
      }
      // Public URLs are not loopback: any port.
      expect((await registerOn(listed, "https://hooks.example.com:8443/hook")).status).toBe(201);
    } finally {
      await listed.close();
    }
  });

  it("none: no loopback URL at all; unset (this file's API): any port", async () => {
    const none = await startTestApi({ SANDBOX_LOOPBACK_PORTS: "none" }, { shareWith: api });
    none.deps.resolveHost = testResolver;
    try {
      for (const url of SANDBOX_ONLY) {
        const refused = await registerOn(none, url);
        expect([refused.status, refused.body.errorCode], url).toEqual([400, "KS-4106"]);
      }
      expect((await registerOn(none, "https://hooks.example.com/hook")).status).toBe(201);
    } finally {
      await none.close();
    }
    expect((await registerOn(api, "http://127.0.0.1:5432/")).status).toBe(201);
  });
});
