import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = new URL("../../", import.meta.url).pathname;

/** What a partner reads: each stands alone, citing no internal document. */
const PARTNER_DOCS = [
  "README.md",
  "packages/sdk/README.md",
  ...readdirSync(join(ROOT, "docs/partners")).map((file) => `docs/partners/${file}`),
  ...[
    "sdk",
    "spins",
    "webhooks",
    "settlements",
    "fairness",
    "free-rounds",
    "errors",
    "limits",
    "versioning",
    "changelog",
    "jurisdictions",
  ].map((name) => `docs/${name}.md`),
];
const read = (file: string) => readFileSync(join(ROOT, file), "utf8");

describe("the partner docs", () => {
  it.each(PARTNER_DOCS)("%s cites no internal document (the contract, the specification, §n)", (file) => {
    const citations = read(file)
      .split("\n")
      // Section signs of RFCs and of public law (GlüStV) cite public texts, not our documents.
      .filter((line) => /CONTRACT|SPEC\.md|\bSPEC\b/.test(line) || (line.includes("§") && !/RFC|GlüStV/.test(line)));
    expect(citations).toEqual([]);
  });

  it.each(PARTNER_DOCS)("%s links only files that exist", (file) => {
    const text = read(file).replace(/```[\s\S]*?```/g, "");
    const broken = [...text.matchAll(/\]\(([^)#\s]+)(#[^)\s]*)?\)/g)]
      .map((match) => match[1]!)
      .filter((target) => !/^[a-z]+:/.test(target) && !target.startsWith("/"))
      .filter((target) => !existsSync(join(ROOT, dirname(file), target)));
    expect(broken).toEqual([]);
  });

  it.each(PARTNER_DOCS)("%s never cuts a sentence that introduces something with a heading", (file) => {
    const lines = read(file)
      .replace(/```[\s\S]*?```/g, "```")
      .split("\n");
    const cut = lines.flatMap((line, index) => {
      const next = lines.slice(index + 1).find((candidate) => candidate.trim() !== "");
      return line.trimEnd().endsWith(":") && next?.startsWith("#") ? [`${line} ⏎ ${next}`] : [];
    });
    expect(cut).toEqual([]);
  });
});
