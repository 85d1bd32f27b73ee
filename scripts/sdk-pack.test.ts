import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { CURRENT_RELEASE } from "@outcomes/core";
import { SDK_VERSION } from "@outcomes/sdk";
import { describe, expect, it } from "vitest";

const ROOT = new URL("../", import.meta.url);
const manifest = (path: string) => JSON.parse(readFileSync(new URL(path, ROOT), "utf8"));

/**
 * `npm run sdk:pack` makes the tarball partners install (docs/partners/guide.md): what it holds and
 * declares, read from `npm pack --dry-run` (the built dist/ as it stands; no prepack rebuild).
 */
describe("the SDK tarball", () => {
  const sdk = manifest("packages/sdk/package.json");
  const packed = JSON.parse(
    execFileSync("npm", ["pack", "-w", "@outcomes/sdk", "--dry-run", "--json", "--ignore-scripts"], {
      cwd: ROOT,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }),
  )[0] as { name: string; version: string; filename: string; files: Array<{ path: string }> };
  const files = packed.files.map((file) => file.path);

  it("is versioned with the release: 1.<release>.0, the API document's info.version", () => {
    expect(packed.version).toBe(`1.${CURRENT_RELEASE}.0`);
    expect(SDK_VERSION).toBe(packed.version);
    expect(packed.filename).toBe(`outcomes-sdk-${packed.version}.tgz`);
  });

  it("declares what a registry and a partner's tooling need", () => {
    expect(sdk.name).toBe("@outcomes/sdk");
    expect(sdk.private).toBeUndefined();
    expect(sdk.license).toBe("MIT");
    expect(sdk.type).toBe("module");
    expect(sdk.types).toBe("./dist/index.d.ts");
    expect(sdk.exports["."]).toEqual(
      expect.objectContaining({ types: "./dist/index.d.ts", import: "./dist/index.js" }),
    );
    // One supported-Node statement for the whole project (README, "Supported Node versions").
    expect(sdk.engines).toEqual(manifest("package.json").engines);
    expect(sdk.dependencies ?? {}).toEqual({});
    // Nothing runs on a partner's install (npm asks to approve install scripts).
    for (const script of ["preinstall", "install", "postinstall", "prepare"])
      expect(sdk.scripts?.[script]).toBeUndefined();
  });

  it("holds the built code, its types, the examples, README and LICENSE, and no test or source", () => {
    for (const file of ["LICENSE", "README.md", "package.json", "dist/index.js", "dist/index.d.ts"]) {
      expect(files).toContain(file);
    }
    expect(files).toContain("examples/webhook-receiver.ts");
    expect(files.filter((file) => /\.test\.|^src\/|tsbuildinfo/.test(file))).toEqual([]);
    for (const target of Object.values(sdk.exports) as Array<string | Record<string, string>>) {
      for (const path of typeof target === "string" ? [target] : Object.values(target)) {
        if (path !== "./package.json") expect(files, path).toContain(path.replace(/^\.\//, ""));
      }
    }
  });
});
