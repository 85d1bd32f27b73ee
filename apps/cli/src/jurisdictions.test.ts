import { cliAgainst } from "@outcomes/testkit/cli";
import { testApiForFile } from "@outcomes/testkit/file-fixture";
import { describe, expect, it } from "vitest";

/** The jurisdiction commands against a real API's database: the API answers what the CLI set. */
const api = testApiForFile();

const { cli, cliJson } = cliAgainst(() => api);

describe("npm run cli -- jurisdictions", () => {
  it("lists the built-ins, defines a profile and sets a partner's default, which the API then answers", async () => {
    const listed = await cliJson("jurisdictions", "list");
    expect(listed.jurisdictions.map((j: { code: string }) => j.code)).toEqual(
      expect.arrayContaining(["NONE", "UK-GC", "DE-GLUSTV", "ON-AGCO"]),
    );
    const put = await cliJson("jurisdictions", "put", "SE-SGA", "--name", "Sweden", "--min-round-ms", "3000");
    expect(put).toEqual({
      code: "SE-SGA",
      name: "Sweden",
      minRoundMs: 3000,
      maxWagerUsd: null,
      sessionReminderMinutes: null,
      builtIn: false,
    });
    const { partnerId, apiKey } = await api.createPartner();
    const partner = await cliJson("jurisdictions", "default", partnerId, "SE-SGA");
    expect(partner.defaultJurisdiction).toBe("SE-SGA");
    const read = await api.request("/api/partner/v1/players/anyone/protection", { apiKey });
    expect(read.body.jurisdiction).toBe("SE-SGA");
  });

  it("refuses a bad code, a figure out of range and an unknown profile with status 1", async () => {
    expect((await cli("jurisdictions", "put", "se", "--name", "x")).code).toBe(1);
    expect((await cli("jurisdictions", "put", "XX", "--name", "x", "--min-round-ms", "60001")).code).toBe(1);
    const { partnerId } = await api.createPartner();
    const unknown = await cli("jurisdictions", "default", partnerId, "NO-SUCH");
    expect([unknown.code, unknown.stderr]).toEqual([1, expect.stringContaining("no profile NO-SUCH")]);
  });
});
