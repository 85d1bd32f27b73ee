import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { productSources, REPO_ROOT, TESTKIT } from "../source-scan.js";

/**
 * Production src/ holds production code only (issue 12, item 2): every source in an app's or a
 * package's src/ is reached from an entry point (an app's main.ts, what a package exports, the SDK's
 * examples) through production imports alone, so none is there only for tests; and no production
 * source imports a test, the testkit or tests/, so the esbuild bundles and the image carry none.
 */

interface Workspace {
  dir: string;
  exports: Record<string, unknown>;
}

/** Each workspace package by name (@outcomes/…), from apps/* and packages/*. */
function workspaces(): Map<string, Workspace> {
  const found = new Map<string, Workspace>();
  for (const top of ["apps", "packages"]) {
    for (const entry of readdirSync(join(REPO_ROOT, top), { withFileTypes: true })) {
      const manifest = join(REPO_ROOT, top, entry.name, "package.json");
      if (!entry.isDirectory() || !existsSync(manifest)) continue;
      const { name, exports = {} } = JSON.parse(readFileSync(manifest, "utf8"));
      found.set(name, {
        dir: `${top}/${entry.name}`,
        exports: typeof exports === "string" ? { ".": exports } : exports,
      });
    }
  }
  return found;
}

/**
 * An export's target as a source path: `./src/x.ts`, the SDK's `./dist/x.js` mapped back to its
 * source, or a plain CommonJS file (the native hasher's loader, `default` only).
 */
function exportTarget(value: unknown): string | undefined {
  const conditions = value as Record<string, unknown> | undefined;
  const target = typeof value === "string" ? value : (conditions?.import ?? conditions?.default);
  return typeof target === "string" ? target.replace(/^\.\/dist\//, "./src/").replace(/\.js$/, ".ts") : undefined;
}

/** Where a workspace package's subpath (`.`, `./x`) leads, wildcard exports included. */
function exportedFile(workspace: Workspace, subpath: string): string | undefined {
  for (const [key, value] of Object.entries(workspace.exports)) {
    const target = exportTarget(value);
    if (!target) continue;
    if (key === subpath) return join(workspace.dir, target);
    const [before, after] = key.split("*");
    if (after !== undefined && subpath.startsWith(before!) && subpath.endsWith(after)) {
      return join(workspace.dir, target.replace("*", subpath.slice(before!.length, subpath.length - after.length)));
    }
  }
  return undefined;
}

const WORKSPACES = workspaces();

/** The repository file an import of `from` names; undefined for npm and node: modules. */
function resolveImport(from: string, specifier: string): string | undefined {
  if (specifier.startsWith(".")) return join(dirname(from), specifier).replace(/\.js$/, ".ts");
  const match = /^(@outcomes\/[^/]+)(\/.+)?$/.exec(specifier);
  const workspace = match && WORKSPACES.get(match[1]!);
  if (!workspace) return undefined;
  return exportedFile(workspace, `.${match![2] ?? ""}`) ?? `${specifier} (not exported)`;
}

/** Every file a source imports or re-exports, statically or by a literal `import()`. */
function importsOf(file: string): string[] {
  const { importedFiles } = ts.preProcessFile(readFileSync(join(REPO_ROOT, file), "utf8"), true, true);
  return importedFiles.flatMap(({ fileName }) => resolveImport(file, fileName) ?? []);
}

/** The files reached from `roots` through `edges`. */
function reachable(roots: string[], edges: (file: string) => string[]): Set<string> {
  const seen = new Set<string>();
  const pending = [...roots];
  while (pending.length > 0) {
    const file = pending.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    pending.push(...edges(file));
  }
  return seen;
}

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
