import { describe, expect, it } from "vitest";
import { checkWebhookUrl, loopbackPortAllowed, NOT_PUBLIC, vetAddresses } from "./webhook-url.js";

const reason = (url: string, environment: "sandbox" | "production") => {
  const check = checkWebhookUrl(url, environment);
  return check.ok ? null : check.reason;
};

describe("checkWebhookUrl", () => {
  it("accepts https everywhere and the three localhost forms over http in sandbox only", () => {
    expect(reason("https://hooks.example.com/ks?x=1", "production")).toBeNull();
    expect(reason("https://hooks.example.com:8443/ks", "sandbox")).toBeNull();
    for (const url of [
      "http://localhost:3000/hook",
      "http://127.0.0.1:9/x",
      "http://[::1]:8080/",
      "http://localhost",
    ]) {
      expect(reason(url, "sandbox")).toBeNull();
      expect(reason(url, "production")).toMatch(/https/);
    }
    expect(checkWebhookUrl("http://[::1]:8080/", "sandbox")).toMatchObject({
      ok: true,
      host: "::1",
      allowLoopback: true,
    });
  });

  it("refuses plain http to anything else, other schemes and credentials", () => {
    expect(reason("http://hooks.example.com/", "sandbox")).toMatch(/plain http only/);
    expect(reason("http://127.0.0.2/", "sandbox")).toMatch(/https/);
    expect(reason("ftp://example.com/", "production")).toBe("must use https");
    expect(reason("javascript:alert(1)", "sandbox")).toBe("must use https");
    expect(reason("https://user:pw@example.com/", "production")).toBe("must not contain credentials");
    expect(reason("https://user@example.com/", "production")).toBe("must not contain credentials");
    expect(reason("/relative", "production")).toBe("must be an absolute URL");
    expect(reason(`https://example.com/${"a".repeat(2048)}`, "production")).toMatch(/at most 2048/);
  });

  it("refuses whitespace and control characters the URL parser would silently drop", () => {
    expect(reason("https://example.com/a\r\nX-Injected: 1", "production")).toMatch(/control/);
    expect(reason("https://exa\tmple.com/", "production")).toMatch(/control/);
    expect(reason(" https://example.com/", "production")).toMatch(/whitespace/);
    expect(reason("https://example.com/\u0000", "production")).toMatch(/control/);
  });

  it("refuses private, loopback, link-local and reserved IP literals in both environments, all alike", () => {
    expect(reason("https://10.0.0.5/hook", "production")).toBe(NOT_PUBLIC);
    expect(reason("https://127.0.0.1/hook", "production")).toBe(NOT_PUBLIC);
    expect(reason("https://127.0.0.1/hook", "sandbox")).toBeNull();
    expect(reason("https://127.1.2.3/hook", "sandbox")).toBe(NOT_PUBLIC);
    expect(reason("https://169.254.169.254/latest/meta-data", "production")).toBe(NOT_PUBLIC);
    expect(reason("https://[::ffff:10.0.0.1]/", "production")).toBe(NOT_PUBLIC);
    expect(reason("https://[fd00::1]/", "sandbox")).toBe(NOT_PUBLIC);
    expect(reason("https://100.64.1.1/", "production")).toBe(NOT_PUBLIC);
    // The URL parser normalises numeric hosts, so these are caught as the addresses they are.
    expect(reason("https://2130706433/", "production")).toBe(NOT_PUBLIC);
    expect(reason("https://0x7f.1/", "production")).toBe(NOT_PUBLIC);
    expect(reason("https://8.8.8.8/", "production")).toBeNull();
  });

  it("refuses localhost names outside the sandbox forms without asking DNS", () => {
    expect(reason("https://localhost/hook", "production")).toBe(NOT_PUBLIC);
    expect(reason("https://api.localhost/hook", "sandbox")).toBe(NOT_PUBLIC);
    expect(reason("https://localhost./hook", "production")).toBe(NOT_PUBLIC);
  });
});

describe("vetAddresses", () => {
  it("refuses a name when any of its addresses is not public, never saying which or why (issue 38)", () => {
    expect(vetAddresses([{ address: "93.184.216.34", family: 4 }], false)).toBeNull();
    const mixed = [
      { address: "93.184.216.34", family: 4 },
      { address: "10.0.0.7", family: 4 },
    ];
    expect(vetAddresses(mixed, false)).toBe(NOT_PUBLIC);
    expect(vetAddresses([{ address: "127.0.0.1", family: 4 }], false)).toBe(NOT_PUBLIC);
    expect(vetAddresses([{ address: "169.254.169.254", family: 4 }], false)).toBe(NOT_PUBLIC);
    expect(vetAddresses([], false)).toBe(NOT_PUBLIC);
  });

  it("lets a sandbox localhost form reach loopback and nothing else private", () => {
    expect(vetAddresses([{ address: "::1", family: 6 }], true)).toBeNull();
    expect(vetAddresses([{ address: "10.0.0.1", family: 4 }], true)).toBe(NOT_PUBLIC);
  });
});

describe("loopbackPortAllowed", () => {
  it("allows any port without a list, the listed ones with it (a URL without a port: its scheme's)", () => {
    expect(loopbackPortAllowed(new URL("http://localhost:5432/"), undefined)).toBe(true);
    expect(loopbackPortAllowed(new URL("http://localhost:8080/"), [8080])).toBe(true);
    expect(loopbackPortAllowed(new URL("http://localhost:5432/"), [8080])).toBe(false);
    expect(loopbackPortAllowed(new URL("http://localhost/"), [80])).toBe(true);
    expect(loopbackPortAllowed(new URL("https://127.0.0.1/"), [80])).toBe(false);
    expect(loopbackPortAllowed(new URL("https://127.0.0.1/"), [443])).toBe(true);
    expect(loopbackPortAllowed(new URL("http://[::1]:8080/"), [])).toBe(false);
  });
});
