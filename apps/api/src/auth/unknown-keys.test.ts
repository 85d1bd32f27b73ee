import { request as httpRequest } from "node:http";
import { type Environment, generateApiKey, hashApiKey } from "@outcomes/core";
import { apiKeys } from "@outcomes/db";
import { isIssuedKey } from "@outcomes/queue";
import { startTestApi, type TestApi } from "@outcomes/testkit/api";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { UNKNOWN_KEYS_PER_WINDOW } from "./failed-auth-throttle.js";
import { KeyVerifier, MAX_UNKNOWN_KEYS } from "./key-verifier.js";

/**
 * Anonymous cost amplification (issue 11, item 1): the key checksum is public, so anyone can mint
 * keys that pass it. Each such key may cost one Postgres look-up, but neither memory nor Postgres
 * load may grow with how many of them an address sends.
 */
let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api?.close();
});

const mint = (environment: Environment = "sandbox") => generateApiKey(environment).key;

/**
 * GET of an unknown route (404 KS-4215 means the key was accepted) from a chosen local address:
 * every 127.x address reaches the test server, each as a client address of its own.
 */
function probeFrom(
  target: TestApi,
  localAddress: string,
  apiKey: string,
  headers: Record<string, string> = {},
  path = "/api/partner/v1/no-such-route",
): Promise<{ status: number; errorCode: string; retryAfter: string | undefined }> {
  const url = new URL(path, target.baseUrl);
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        localAddress,
        headers: { "X-API-Key": apiKey, ...headers },
      },
      (response) => {
        let text = "";
        response.setEncoding("utf8");
        response.on("data", (chunk) => {
          text += chunk;
        });
        response.on("end", () => {
          const retryAfter = response.headers["retry-after"];
          resolve({ status: response.statusCode ?? 0, errorCode: JSON.parse(text).errorCode, retryAfter });
        });
      },
    );
    outgoing.on("error", reject);
    outgoing.end();
  });
}

describe("the key cache is bounded", () => {
  it("5 × MAX_UNKNOWN_KEYS minted keys leave MAX_UNKNOWN_KEYS cached, and the valid key still cached", async () => {
    const { apiKey, partnerId } = await api.createPartner();
    const verifier = new KeyVerifier(api.database.db, ["sandbox", "production"]);
    await verifier.verify(apiKey);
    const minted = Array.from({ length: 5 * MAX_UNKNOWN_KEYS }, () => mint());
    for (let start = 0; start < minted.length; start += 50) {
      await Promise.all(
        minted.slice(start, start + 50).map((key) => expect(verifier.verify(key)).rejects.toThrow("Invalid API key")),
      );
    }
    expect(verifier.cachedKeys()).toEqual({ known: 1, unknown: MAX_UNKNOWN_KEYS });
    // The flood did not push the valid key out: it is still known, so no guard is asked about it.
    const refuseAll = {
      admit: () => Promise.reject(new Error("guard asked")),
      found: async () => {},
      release: async () => {},
    };
    await expect(verifier.verify(apiKey, refuseAll)).resolves.toMatchObject({ partnerId });
  });
});

describe("unknown keys are throttled per client address", () => {
  it("past the limit an address gets 429 KS-4292 with Retry-After and no look-up; other addresses and known keys do not", async () => {
    const attacker = "127.0.0.3";
    const stranger = "127.0.0.4";
    const known = await api.createPartner();
    const fresh = await api.createPartner();
    // A partner behind the attacker's address whose key this process has verified before.
    expect((await probeFrom(api, attacker, known.apiKey)).errorCode).toBe("KS-4215");

    const select = vi.spyOn(api.deps.db, "select");
    try {
      for (let i = 0; i < UNKNOWN_KEYS_PER_WINDOW; i++) {
        expect((await probeFrom(api, attacker, mint())).errorCode).toBe("KS-4002");
      }
      expect(select).toHaveBeenCalledTimes(UNKNOWN_KEYS_PER_WINDOW);

      for (let i = 0; i < 50; i++) {
        const refused = await probeFrom(api, attacker, mint());
        expect([refused.status, refused.errorCode]).toEqual([429, "KS-4292"]);
        expect(Number(refused.retryAfter)).toBeGreaterThanOrEqual(1);
        expect(Number(refused.retryAfter)).toBeLessThanOrEqual(60);
      }
      // 50 more minted keys, not one more look-up.
      expect(select).toHaveBeenCalledTimes(UNKNOWN_KEYS_PER_WINDOW);

      // Another address: its unknown keys are looked up and refused as usual; a valid key works.
      expect((await probeFrom(api, stranger, mint())).errorCode).toBe("KS-4002");
      expect((await probeFrom(api, stranger, fresh.apiKey)).errorCode).toBe("KS-4215");
      // The throttled address keeps the keys this process already verified ...
      await new Promise((resolve) => setTimeout(resolve, 1100));
      expect((await probeFrom(api, attacker, known.apiKey)).errorCode).toBe("KS-4215");
      // ... and a key it has never seen, issued where the issued-key set was not kept (an older
      // release; the testkit inserts the row directly), waits for the window like any unknown key.
      const unseen = await api.createPartner();
      expect((await probeFrom(api, attacker, unseen.apiKey)).errorCode).toBe("KS-4292");
    } finally {
      select.mockRestore();
    }
  });

  it("a burst of 3 × the allowance with one valid key the process never saw is all accepted, with one look-up", async () => {
    // A partner's server right after a deploy: many concurrent requests, one key, one address.
    const partnerServer = "127.0.0.7";
    const { apiKey } = await api.createPartner();
    const select = vi.spyOn(api.deps.db, "select");
    try {
      const answers = await Promise.all(
        Array.from({ length: 3 * UNKNOWN_KEYS_PER_WINDOW }, () => probeFrom(api, partnerServer, apiKey)),
      );
      expect(answers.map((answer) => answer.errorCode)).toEqual(Array(3 * UNKNOWN_KEYS_PER_WINDOW).fill("KS-4215"));
      expect(select).toHaveBeenCalledTimes(1);
    } finally {
      select.mockRestore();
    }
  });

  it("X-Forwarded-For does not get an address out of the throttle unless its peer is a trusted proxy", async () => {
    const direct = "127.0.0.5";
    for (let i = 0; i < UNKNOWN_KEYS_PER_WINDOW; i++) await probeFrom(api, direct, mint());
    const spoofed = await probeFrom(api, direct, mint(), { "X-Forwarded-For": "198.51.100.1" });
    expect(spoofed.errorCode).toBe("KS-4292");

    const proxied = await startTestApi({ TRUSTED_PROXIES: "127.0.0.6/32" }, { shareWith: api });
    try {
      const proxy = "127.0.0.6";
      const from = (client: string) => ({ "X-Forwarded-For": `198.51.100.7, ${client}` });
      for (let i = 0; i < UNKNOWN_KEYS_PER_WINDOW; i++) {
        expect((await probeFrom(proxied, proxy, mint(), from("203.0.113.9"))).errorCode).toBe("KS-4002");
      }
      // The client behind the proxy is throttled (the address left of it is the client's to forge) ...
      expect((await probeFrom(proxied, proxy, mint(), from("203.0.113.9"))).errorCode).toBe("KS-4292");
      // ... and neither the proxy itself nor the other clients behind it are.
      expect((await probeFrom(proxied, proxy, mint(), from("203.0.113.10"))).errorCode).toBe("KS-4002");
      expect((await probeFrom(proxied, proxy, mint())).errorCode).toBe("KS-4002");

      // An IPv6 client counts as its /64: stepping to another address of the block does not help.
      for (let i = 0; i < UNKNOWN_KEYS_PER_WINDOW; i++)
        await probeFrom(proxied, proxy, mint(), from("2001:db8:0:7::1"));
      expect((await probeFrom(proxied, proxy, mint(), from("2001:db8::7:0:0:0:2"))).errorCode).toBe("KS-4292");
      expect((await probeFrom(proxied, proxy, mint(), from("2001:db8:0:8::1"))).errorCode).toBe("KS-4002");
    } finally {
      await proxied.close();
    }
  });
});

describe("keys known to exist skip the count (issue 21, item 6)", () => {
  /** A partner and a key issued through the operator API, which lists it in the issued-key set. */
  async function issuedKey(target: TestApi) {
    const { partnerId } = await target.createPartner();
    const issued = await target.request(`/api/admin/v1/partners/${partnerId}/api-keys`, {
      method: "POST",
      admin: true,
      json: { environment: "sandbox" },
    });
    expect(issued.status).toBe(201);
    return { partnerId, keyId: issued.body.id as string, apiKey: issued.body.key as string };
  }

  it("an address out of unknown-key budget still gets 200 for a valid key no API process has cached, and 429 for minted ones", async () => {
    // A NAT or a load balancer without TRUSTED_PROXIES: the partner and the one minting keys share it.
    const shared = "127.0.0.9";
    const partner = await issuedKey(api);
    // A fresh API process: nothing cached, as right after a deploy.
    const fresh = await startTestApi({}, { shareWith: api });
    try {
      for (let i = 0; i < UNKNOWN_KEYS_PER_WINDOW; i++) {
        expect((await probeFrom(fresh, shared, mint())).errorCode).toBe("KS-4002");
      }
      expect((await probeFrom(fresh, shared, mint())).errorCode).toBe("KS-4292");
      expect(fresh.deps.keyVerifier.cachedKeys().known).toBe(0);

      const games = await probeFrom(fresh, shared, partner.apiKey, {}, "/api/partner/v1/games");
      expect(games.status).toBe(200);
      const minted = await probeFrom(fresh, shared, mint());
      expect([minted.status, minted.errorCode]).toEqual([429, "KS-4292"]);
    } finally {
      await fresh.close();
    }
  });

  it("listing spares the count only: a listed key revoked behind the set's back is still refused by Postgres", async () => {
    const shared = "127.0.0.10";
    const partner = await issuedKey(api);
    // Revoked as a release that does not keep the set would: the row changes, the listing stays.
    await api.database.db.update(apiKeys).set({ revokedAt: new Date() }).where(eq(apiKeys.id, partner.keyId));
    expect(await isIssuedKey(api.deps.redis, api.deps.keys, hashApiKey(partner.apiKey), Date.now())).toBe(true);
    const fresh = await startTestApi({}, { shareWith: api });
    try {
      for (let i = 0; i < UNKNOWN_KEYS_PER_WINDOW; i++) await probeFrom(fresh, shared, mint());
      const revoked = await probeFrom(fresh, shared, partner.apiKey);
      expect([revoked.status, revoked.errorCode]).toEqual([401, "KS-4003"]);
      // The look-up that found it revoked unlisted it: from now on it is counted like any other.
      expect(await isIssuedKey(api.deps.redis, api.deps.keys, hashApiKey(partner.apiKey), Date.now())).toBe(false);
    } finally {
      await fresh.close();
    }
  });

  it("a live key not listed (issued by an older release) is listed once an API process finds it", async () => {
    const { apiKey } = await api.createPartner();
    const hash = hashApiKey(apiKey);
    expect(await isIssuedKey(api.deps.redis, api.deps.keys, hash, Date.now())).toBe(false);
    expect((await probeFrom(api, "127.0.0.11", apiKey)).errorCode).toBe("KS-4215");
    expect(await isIssuedKey(api.deps.redis, api.deps.keys, hash, Date.now())).toBe(true);

    // Another process, fresh, from an address out of budget: the listing lets it through.
    const fresh = await startTestApi({}, { shareWith: api });
    try {
      for (let i = 0; i < UNKNOWN_KEYS_PER_WINDOW; i++) await probeFrom(fresh, "127.0.0.12", mint());
      expect((await probeFrom(fresh, "127.0.0.12", apiKey)).errorCode).toBe("KS-4215");
    } finally {
      await fresh.close();
    }
  });
});
