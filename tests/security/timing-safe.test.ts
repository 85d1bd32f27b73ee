import * as crypto from "node:crypto";
import { signPayload, signStandardWebhook, verifyStandardWebhook, verifyWebhookSignature } from "@outcomes/sdk";
import { startTestApi, TEST_ADMIN_TOKEN, type TestApi } from "@outcomes/testkit/api";
import ts from "typescript";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { safeEqual } from "../../apps/api/src/middleware/admin-auth.js";
import { type Finding, finding, operandName, parseSource, productSources, visit } from "../source-scan.js";

/**
 * Secrets are compared in constant time (issue 8, item 6): the operator token and webhook
 * signatures go through `crypto.timingSafeEqual` (watched here through a spy on the real function),
 * and no product source compares a secret-named value with `===`. API keys are not compared at all:
 * their SHA-256 is looked up by index, so a caller timing the answer learns about a hash it cannot
 * steer, not about the key.
 */
vi.mock("node:crypto", async (importOriginal) => {
  const actual = await importOriginal<typeof import("node:crypto")>();
  return { ...actual, timingSafeEqual: vi.fn(actual.timingSafeEqual) };
});
const timingSafeEqual = vi.mocked(crypto.timingSafeEqual);

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api?.close();
});
beforeEach(() => {
  timingSafeEqual.mockClear();
});

const compared = () =>
  timingSafeEqual.mock.calls.map(([a, b]) => [
    Buffer.from(a as Uint8Array).toString(),
    Buffer.from(b as Uint8Array).toString(),
  ]);

describe("operator token", () => {
  it("the middleware compares a presented token of the right length with timingSafeEqual", async () => {
    const wrong = `${TEST_ADMIN_TOKEN.slice(0, -1)}x`;
    const refused = await api.request("/api/admin/v1/partners", { headers: { Authorization: `Bearer ${wrong}` } });
    expect(refused.body.errorCode).toBe("KS-4002");
    expect(compared()).toEqual([[wrong, TEST_ADMIN_TOKEN]]);

    timingSafeEqual.mockClear();
    expect((await api.request("/api/admin/v1/partners", { admin: true })).status).toBe(200);
    expect(compared()).toEqual([[TEST_ADMIN_TOKEN, TEST_ADMIN_TOKEN]]);
  });

  it("safeEqual answers by content, and by length without comparing (only the length can leak)", () => {
    expect(safeEqual("abc", "abc")).toBe(true);
    expect(safeEqual("abd", "abc")).toBe(false);
    expect(timingSafeEqual).toHaveBeenCalledTimes(2);
    expect(safeEqual("abcd", "abc")).toBe(false);
    expect(safeEqual("é", "abc")).toBe(false);
    expect(timingSafeEqual).toHaveBeenCalledTimes(2);
  });
});

describe("webhook signatures (the SDK receivers verify with)", () => {
  const secret = `whsec_${Buffer.alloc(32, 7).toString("base64")}`;
  const body = '{"id":"evt_1","type":"spin.large_win"}';

  it("X-Service-Signature is checked with timingSafeEqual", () => {
    expect(verifyWebhookSignature({ rawBody: body, signatureHeader: signPayload(body, secret), secret })).toBe(true);
    expect(verifyWebhookSignature({ rawBody: `${body} `, signatureHeader: signPayload(body, secret), secret })).toBe(
      false,
    );
    expect(timingSafeEqual).toHaveBeenCalledTimes(2);
  });

  it("webhook-signature (Standard Webhooks) is checked with timingSafeEqual", () => {
    const timestamp = Math.floor(Date.now() / 1000);
    const signature = signStandardWebhook({ id: "dlv_1", timestamp, rawBody: body, secret });
    const stale = signStandardWebhook({ id: "dlv_1", timestamp: timestamp - 1, rawBody: body, secret });
    const headers = {
      "webhook-id": "dlv_1",
      "webhook-timestamp": String(timestamp),
      "webhook-signature": `${stale} ${signature}`,
    };
    expect(verifyStandardWebhook({ rawBody: body, headers, secret })).toBe(true);
    // Every candidate of the list is compared the same way.
    expect(timingSafeEqual).toHaveBeenCalledTimes(2);
  });
});

/** Names that hold secrets or values derived from them: `token`, `adminToken`, `expectedSignature` … */
const SECRET_NAME =
  /^(?:[a-z][A-Za-z0-9]*(?:Token|Secret|Signature|Digest|Hash|Password|ApiKey)|token|secret|signature|digest|hash|password|apiKey)$/;

/** `===` comparisons a reviewer checked: neither side is a secret. */
const ALLOWED_COMPARISONS: Array<{ file: string; text: string; why: string }> = [
  {
    file: "packages/core/src/replay-token.ts",
    text: 'bytes.toString("base64url") !== token',
    why: "a replay token against its own bytes re-encoded (one spelling per token): both sides are the caller's text; the MAC is compared with timingSafeEqual",
  },
  {
    file: "apps/api/src/idempotency.ts",
    text: "record.requestHash !== request.hash",
    why: "hashes of request bodies the caller sent itself, to tell a replay from another request",
  },
  {
    file: "packages/sdk/src/fairness/verify.ts",
    text: "seedHash !== block.seedHash",
    why: "public commitments: SHA-256 of a revealed seed against the seedHash published at sealing",
  },
  {
    file: "packages/sdk/src/fairness/verify.ts",
    text: "block.cycle.seedHash !== seedHash",
    why: "public commitments: the cycle's published seedHash against SHA-256 of its revealed seed",
  },
];

function isLiteral(node: ts.Expression): boolean {
  return (
    ts.isLiteralExpression(node) ||
    node.kind === ts.SyntaxKind.NullKeyword ||
    node.kind === ts.SyntaxKind.TrueKeyword ||
    node.kind === ts.SyntaxKind.FalseKeyword ||
    (ts.isIdentifier(node) && node.text === "undefined") ||
    ts.isTypeOfExpression(node)
  );
}

const EQUALITY = new Set([
  ts.SyntaxKind.EqualsEqualsEqualsToken,
  ts.SyntaxKind.ExclamationEqualsEqualsToken,
  ts.SyntaxKind.EqualsEqualsToken,
  ts.SyntaxKind.ExclamationEqualsToken,
]);

function secretComparisons(source: ts.SourceFile): Finding[] {
  const found: Finding[] = [];
  visit(source, (node) => {
    if (!ts.isBinaryExpression(node) || !EQUALITY.has(node.operatorToken.kind)) return;
    if (isLiteral(node.left) || isLiteral(node.right)) return;
    const names = [operandName(node.left), operandName(node.right)];
    if (names.some((name) => name !== null && SECRET_NAME.test(name))) {
      found.push(finding(source, node));
    }
  });
  return found;
}

describe("no secret compared with ===", () => {
  it("in any product source", () => {
    const found = productSources().flatMap((file) => secretComparisons(parseSource(file)));
    const allowed = (entry: Finding) =>
      ALLOWED_COMPARISONS.some((rule) => rule.file === entry.file && rule.text === entry.text);
    expect(found.filter((entry) => !allowed(entry))).toEqual([]);
    for (const rule of ALLOWED_COMPARISONS) {
      expect(
        found.some((entry) => entry.file === rule.file && entry.text === rule.text),
        rule.text,
      ).toBe(true);
    }
  });

  it("the scan sees such a comparison when there is one", () => {
    // Lengths are public (safeEqual checks them first); unrelated names are not secrets.
    const probe = [
      "if (token === expectedToken) f();",
      "if (header.signature !== signature) f();",
      "if (token.length === expected.length) f();",
      "if (kind === ts.SyntaxKind.PlusToken) f();",
      "if (a === b || hash === undefined) f();",
    ].join("\n");
    const found = secretComparisons(ts.createSourceFile("probe.ts", probe, ts.ScriptTarget.Latest, true));
    expect(found.map((entry) => entry.text)).toEqual(["token === expectedToken", "header.signature !== signature"]);
  });
});
