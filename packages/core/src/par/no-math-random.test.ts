import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const here = dirname(fileURLToPath(import.meta.url));

/** Every module reachable from the PAR code by relative imports, starting at its index. */
function reachableSources(entry: string): Map<string, string> {
  const seen = new Map<string, string>();
  const pending = [entry];
  while (pending.length > 0) {
    const file = pending.pop() as string;
    if (seen.has(file)) continue;
    const text = readFileSync(file, "utf8");
    seen.set(file, text);
    for (const match of text.matchAll(/from\s+"(\.{1,2}\/[^"]+)"/g)) {
      pending.push(resolve(dirname(file), (match[1] as string).replace(/\.js$/, ".ts")));
    }
  }
  return seen;
}

const sdkFairness = resolve(here, "../../../sdk/src/fairness");

describe("randomness of outcome code", () => {
  it("never reaches Math.random: seeds come from node:crypto, draws from the SDK's AES-CTR DRBG", () => {
    const sources = reachableSources(join(here, "index.ts"));
    const files = [...sources.keys()].map((file) => file.slice(here.length - "par".length));
    expect(files).toEqual(expect.arrayContaining(["par/draw.ts", "par/block.ts", "money.ts"]));
    const derivation = reachableSources(join(sdkFairness, "index.ts"));
    expect([...derivation.keys()].map((file) => file.slice(sdkFairness.length + 1))).toEqual(
      expect.arrayContaining(["keystream.ts", "derive.ts", "sheet.ts"]),
    );
    const allowed = ["node:crypto", "node:os", "zod", "@outcomes/sdk"];
    for (const [file, text] of [...sources, ...derivation]) {
      expect(text, file).not.toMatch(/Math\s*\.\s*random/);
      for (const match of text.matchAll(/from\s+"([^".][^"]*)"/g)) {
        expect(allowed, `${file} imports ${match[1]}`).toContain(match[1]);
      }
    }
    // The only source of seeds: 32 bytes of the OS CSPRNG.
    expect(sources.get(join(here, "block.ts"))).toMatch(/randomBytes\(SEED_BYTES\)/);
  });

  it("scans every source file of the folder", () => {
    const listed = readdirSync(here).filter((name) => name.endsWith(".ts") && !name.endsWith(".test.ts"));
    const reached = [...reachableSources(join(here, "index.ts")).keys()].filter((file) => dirname(file) === here);
    expect(reached.map((file) => file.slice(here.length + 1)).sort()).toEqual(listed.sort());
  });
});
