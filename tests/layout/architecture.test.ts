import { readdirSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { importsOf } from "../import-graph.js";
import { parseSource, productSources, REPO_ROOT, TESTKIT, visit } from "../source-scan.js";

/**
 * The layers' arrows point one way (ARCHITECTURE.md): no import cycle among product sources, no
 * package that imports an app, and every error code named where it is thrown (`ErrorCode.…`), its
 * `KS-nnnn` text written once, in the code table.
 */

const sources = productSources();
const edges = new Map(sources.map((file) => [file, importsOf(file).filter((target) => target !== file)]));

/** Tarjan's strongly connected components of the graph with more than one file: each is a cycle. */
function cycles(graph: Map<string, string[]>): string[][] {
  let index = 0;
  const indexes = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const connect = (file: string) => {
    indexes.set(file, index);
    low.set(file, index);
    index++;
    stack.push(file);
    onStack.add(file);
    for (const next of graph.get(file) ?? []) {
      if (!graph.has(next)) continue;
      if (!indexes.has(next)) {
        connect(next);
        low.set(file, Math.min(low.get(file)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(file, Math.min(low.get(file)!, indexes.get(next)!));
    }
    if (low.get(file) !== indexes.get(file)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    if (component.length > 1) found.push(component.sort());
  };
  for (const file of graph.keys()) if (!indexes.has(file)) connect(file);
  return found;
}

describe("architecture", () => {
  it("finds a cycle where there is one (the check itself)", () => {
    const graph = new Map([
      ["a", ["b"]],
      ["b", ["c"]],
      ["c", ["a"]],
      ["d", ["a"]],
    ]);
    expect(cycles(graph)).toEqual([["a", "b", "c"]]);
    expect(
      cycles(
        new Map([
          ["a", ["b"]],
          ["b", []],
        ]),
      ),
    ).toEqual([]);
  });

  it("has no import cycle among product sources", () => {
    expect(sources.length).toBeGreaterThan(100);
    expect(cycles(edges)).toEqual([]);
  });

  it("has no package importing an app", () => {
    const packageFiles = [...edges.keys(), ...testkitSources()].filter((file) => file.startsWith("packages/"));
    const upward = packageFiles.flatMap((file) =>
      importsOf(file)
        .filter((target) => target.startsWith("apps/"))
        .map((target) => `${file} → ${target}`),
    );
    expect(upward).toEqual([]);
  });

  it("writes no error code's KS-nnnn text outside the code table", () => {
    // The SDK is published without internal dependencies: it keeps the codes it acts on itself.
    const literals = sources
      .filter((file) => file !== "packages/core/src/errors.ts" && !file.startsWith("packages/sdk/"))
      .flatMap((file) => {
        const source = parseSource(file);
        const found: string[] = [];
        visit(source, (node) => {
          if ((ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) && /^KS-\d{4}$/.test(node.text)) {
            found.push(`${file}: ${node.text}`);
          }
        });
        return found;
      });
    expect(literals).toEqual([]);
  });

  it("draws no randomness from Math.random: outcomes, keys, ids, secrets and jitter use node:crypto", () => {
    const calls = sources.flatMap((file) => {
      const found: string[] = [];
      visit(parseSource(file), (node) => {
        if (ts.isPropertyAccessExpression(node) && node.getText() === "Math.random") found.push(file);
      });
      return found;
    });
    expect(calls).toEqual([]);
  });
});

/** The testkit's sources: a package too, though it never ships (productSources leaves it out). */
function testkitSources(): string[] {
  return readdirSync(join(REPO_ROOT, TESTKIT, "src"))
    .filter((name) => name.endsWith(".ts") && !name.endsWith(".test.ts"))
    .map((name) => `${TESTKIT}src/${name}`);
}
