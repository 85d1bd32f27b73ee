import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import ts from "typescript";
import { REPO_ROOT } from "./source-scan.js";

/** The workspaces' import graph, resolved to repository files (workspace imports through their exports). */

export interface Workspace {
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
export function exportedFile(workspace: Workspace, subpath: string): string | undefined {
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

export const WORKSPACES = workspaces();

/** The repository file an import of `from` names; undefined for npm and node: modules. */
function resolveImport(from: string, specifier: string): string | undefined {
  if (specifier.startsWith(".")) return join(dirname(from), specifier).replace(/\.js$/, ".ts");
  const match = /^(@outcomes\/[^/]+)(\/.+)?$/.exec(specifier);
  const workspace = match && WORKSPACES.get(match[1]!);
  if (!workspace) return undefined;
  return exportedFile(workspace, `.${match![2] ?? ""}`) ?? `${specifier} (not exported)`;
}

/** Every file a source imports or re-exports, statically or by a literal `import()`. */
export function importsOf(file: string): string[] {
  const { importedFiles } = ts.preProcessFile(readFileSync(join(REPO_ROOT, file), "utf8"), true, true);
  return importedFiles.flatMap(({ fileName }) => resolveImport(file, fileName) ?? []);
}

/** The files reached from `roots` through `edges`. */
export function reachable(roots: string[], edges: (file: string) => string[]): Set<string> {
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
