import { readFileSync } from "node:fs";
import { ERROR_GUIDANCE, ErrorCode, NOTHING_DONE_CODES } from "@outcomes/core";
import { PartnerClient, PartnerNetworkError, NOTHING_DONE_CODES as SDK_NOTHING_DONE } from "@outcomes/sdk";
import { describe, expect, it } from "vitest";
import { errorReferenceHtml, errorReferenceMarkdown } from "./error-reference.js";
import { errorStatus } from "./error-status.js";
import { spinRoute } from "./routes/partner/spins.js";

const CODES = Object.values(ErrorCode) as ErrorCode[];

describe("the error reference", () => {
  it("is docs/errors.md exactly (run `npm run docs:errors` after changing a code or its guidance)", () => {
    const file = readFileSync(new URL("../../../docs/errors.md", import.meta.url), "utf8");
    expect(file).toBe(errorReferenceMarkdown());
  });

  it("explains every code, with an anchor in both views", () => {
    expect(Object.keys(ERROR_GUIDANCE).sort()).toEqual([...CODES].sort());
    const markdown = errorReferenceMarkdown();
    const html = errorReferenceHtml();
    for (const code of CODES) {
      const guidance = ERROR_GUIDANCE[code];
      expect(guidance.meaning.length, code).toBeGreaterThan(10);
      expect(guidance.action.length, code).toBeGreaterThan(10);
      expect(markdown).toContain(`<a id="${code.toLowerCase()}"></a>`);
      expect(markdown).toContain(`### ${code} · ${errorStatus(code)} ·`);
      expect(html).toContain(`<section id="${code.toLowerCase()}">`);
    }
  });

  it("says for every code a spin can answer whether the wager was deducted", () => {
    const spinCodes = Object.values(spinRoute.responses)
      .flatMap((response) => (response as { description: string }).description.match(/KS-\d{4}/g) ?? [])
      .map((code) => code as ErrorCode);
    expect(spinCodes).toContain(ErrorCode.SpinFailed);
    for (const code of spinCodes) expect(ERROR_GUIDANCE[code].wagerDeducted, code).toBeDefined();
  });
});

type Answer = { status: number; body?: unknown; headers?: Record<string, string> } | Error;

/** The number of requests the SDK sends for one call whose first answer is `first` and the next ones 200. */
async function attempts(first: Answer, call: (client: PartnerClient) => Promise<unknown>): Promise<number> {
  let sent = 0;
  const client = new PartnerClient({
    apiKey: "ks_sandbox_test",
    baseUrl: "https://outcomes.example.com",
    fetch: async () => {
      sent++;
      if (sent > 1) return new Response("{}", { status: 200 });
      if (first instanceof Error) throw first;
      return new Response(JSON.stringify(first.body), { status: first.status, headers: first.headers });
    },
    sleep: async () => {},
  });
  await call(client).catch(() => undefined);
  return sent;
}

const spin = { gameId: 1, playerId: "p-1", wagerUsd: 1 };
const CALLS = {
  read: (client: PartnerClient) => client.games.list(),
  void: (client: PartnerClient) => client.voidSpin("spn_1", { reason: "wallet refused" }),
  keyedSpin: (client: PartnerClient) => client.spin(spin, { idempotencyKey: "round-1" }),
  unkeyedSpin: (client: PartnerClient) => client.spin(spin),
  // A write the service does not de-duplicate: each rotation makes a new secret.
  write: (client: PartnerClient) => client.webhooks.rotateSecret("whk_1"),
};
const HARMLESS = new Set(["read", "void", "keyedSpin"]);

describe("the SDK retries as the reference's rule says", () => {
  it("has the reference's nothing-was-done codes", () => {
    const nothingDone = NOTHING_DONE_CODES.filter((code) => errorStatus(code) !== 429);
    expect([...SDK_NOTHING_DONE].sort()).toEqual([...nothingDone].sort());
  });

  it.each(CODES)("%s", async (code) => {
    const answer = {
      status: errorStatus(code),
      body: { message: "refused", errorCode: code, requestId: "req_1" },
      headers: { "Content-Type": "application/json", "Retry-After": "1" },
    };
    const { retry } = ERROR_GUIDANCE[code];
    for (const [kind, call] of Object.entries(CALLS)) {
      const retried =
        retry === "after-retry-after" || retry === "backoff" || (retry === "idempotent-only" && HARMLESS.has(kind));
      expect(await attempts(answer, call), `${code} on a ${kind}`).toBe(retried ? 2 : 1);
    }
  });

  it("treats a lost answer as KS-5001: repeated only when harmless", async () => {
    for (const [kind, call] of Object.entries(CALLS)) {
      const lost = new PartnerNetworkError("socket hang up");
      expect(await attempts(lost, call), kind).toBe(HARMLESS.has(kind) ? 2 : 1);
    }
  });
});
