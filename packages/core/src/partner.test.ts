import { describe, expect, it } from "vitest";
import { partnerInputProblems, SLUG_PATTERN } from "./partner.js";

describe("partner slug rules", () => {
  it.each(["acme", "acme-casino", "a1b", "123", "x".repeat(64), "a--b"])("accepts %s", (slug) => {
    expect(SLUG_PATTERN.test(slug)).toBe(true);
  });

  it.each(["ab", "x".repeat(65), "Acme", "acme_casino", "-acme", "acme-", "ac me", "acmé", ""])(
    "refuses %j",
    (slug) => {
      expect(SLUG_PATTERN.test(slug)).toBe(false);
    },
  );
});

describe("partnerInputProblems", () => {
  it("accepts a complete partner with or without a contact email", () => {
    expect(partnerInputProblems({ slug: "acme", name: "Acme", contactEmail: "ops@acme.example" })).toEqual([]);
    expect(partnerInputProblems({ slug: "acme", name: "Acme", contactEmail: null })).toEqual([]);
    expect(partnerInputProblems({ slug: "acme", name: "Acme" })).toEqual([]);
  });

  it("names every field at fault", () => {
    const problems = partnerInputProblems({ slug: "A", name: "   ", contactEmail: "not-an-email" });
    expect(problems.map((problem) => problem.path)).toEqual(["slug", "name", "contactEmail"]);
  });

  it("refuses over-long names and addresses", () => {
    expect(partnerInputProblems({ slug: "acme", name: "n".repeat(201) })[0]?.path).toBe("name");
    const longEmail = `${"a".repeat(250)}@b.co`;
    expect(partnerInputProblems({ slug: "acme", name: "Acme", contactEmail: longEmail })[0]?.path).toBe("contactEmail");
  });

  it.each(["a@b", "@acme.example", "ops@", "ops@@acme.example", "ops@-acme.example", "ops acme@x.example"])(
    "refuses the address %j",
    (contactEmail) => {
      expect(partnerInputProblems({ slug: "acme", name: "Acme", contactEmail })).toHaveLength(1);
    },
  );
});
