import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { exportedFile, importsOf, reachable, WORKSPACES } from "../import-graph.js";
import { productSources, REPO_ROOT, TESTKIT } from "../source-scan.js";

/**
 * Production src/ holds production code only (issue 12, item 2): every source in an app's or a
 * package's src/ is reached from an entry point (an app's main.ts, what a package exports, the SDK's
 * examples) through production imports alone, so none is there only for tests; and no production
 * source imports a test, the testkit or tests/, so the esbuild bundles and the image carry none.
 */

const isProduction = (file: string) => /^(apps|packages)\/[^/]+\/src\//.test(file) && !file.startsWith(TESTKIT);

describe("production sources", () => {
  const sources = productSources();
  const imports = new Map(sources.map((file) => [file, importsOf(file)]));
  const entryPoints = [
    ...sources.filter((file) => /^apps\/[^/]+\/src\/main\.ts$/.test(file) || /^packages\/[^/]+\/examples\//.test(file)),
    ...[...WORKSPACES.values()]
      .filter((workspace) => workspace.dir.startsWith("packages/"))
      .flatMap((workspace) => Object.keys(workspace.exports).map((subpath) => exportedFile(workspace, subpath)))
      .filter((file): file is string => file !== undefined && isProduction(file)),
  ];

  it("resolves every workspace import of a production source to a file", () => {
    expect(entryPoints).toEqual(expect.arrayContaining(["apps/api/src/main.ts", "packages/db/src/index.ts"]));
    const unresolved = [...imports.values()].flat().filter((file) => !existsSync(join(REPO_ROOT, file)));
    expect(unresolved).toEqual([]);
  });

  it("imports no test, no testkit module and nothing under tests/", () => {
    const testOnly = (file: string) =>
      file.endsWith(".test.ts") || file.startsWith(TESTKIT) || file.startsWith("tests/");
    const found = [...imports].flatMap(([file, targets]) =>
      targets.filter(testOnly).map((target) => `${file} → ${target}`),
    );
    expect(found).toEqual([]);
  });

  it("are each reached from an entry point through production imports, not only from tests", () => {
    const production = sources.filter(isProduction);
    expect(production.length).toBeGreaterThan(100);
    const reached = reachable(entryPoints, (file) => imports.get(file) ?? []);
    expect(production.filter((file) => !reached.has(file))).toEqual([]);
  });

  it("tells a file reached only from a test", () => {
    const edges: Record<string, string[]> = { main: ["a"], a: ["b"], "c.test": ["c"] };
    expect([...reachable(["main"], (file) => edges[file] ?? [])].sort()).toEqual(["a", "b", "main"]);
  });
});
