import * as database from "@outcomes/db";
import { is, Table } from "drizzle-orm";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { type Finding, finding, parseSource, productSources, visit } from "../source-scan.js";

/**
 * SQL has one home (issue 25, item 2): the repositories of packages/db. The apps call them and hold
 * no statement of their own, so no app source imports a SQL builder or driver (drizzle-orm,
 * postgres), takes a table from @outcomes/db (with one, `db.select().from(table)` needs no other
 * import), or sends text of its own (`.unsafe(…)`, `.execute(…)`). The apps' caches and batching
 * stay theirs; only their loads are repository calls.
 */
const DRIVERS = /^(drizzle-orm(\/.*)?|postgres)$/;
const RAW_SQL_METHODS = new Set(["unsafe", "execute"]);

/** The tables @outcomes/db exports (its drizzle schema), by name. */
const TABLES = new Set(Object.entries(database).flatMap(([name, value]) => (is(value, Table) ? [name] : [])));

const moduleOf = (node: ts.ImportDeclaration | ts.ExportDeclaration) =>
  node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier) ? node.moduleSpecifier.text : null;

/** `import("…")` or `require("…")`. */
const isModuleLoad = (call: ts.CallExpression) =>
  call.expression.kind === ts.SyntaxKind.ImportKeyword ||
  (ts.isIdentifier(call.expression) && call.expression.text === "require");

/** Every place a source writes SQL or reaches for what writing it needs. */
function sqlFindings(source: ts.SourceFile): Finding[] {
  const found: Finding[] = [];
  visit(source, (node) => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && DRIVERS.test(moduleOf(node) ?? "")) {
      found.push(finding(source, node));
    } else if (ts.isImportDeclaration(node) && moduleOf(node) === "@outcomes/db" && !node.importClause?.isTypeOnly) {
      const bindings = node.importClause?.namedBindings;
      for (const element of bindings && ts.isNamedImports(bindings) ? bindings.elements : []) {
        if (!element.isTypeOnly && TABLES.has((element.propertyName ?? element.name).text)) {
          found.push(finding(source, element));
        }
      }
    } else if (ts.isCallExpression(node) && isModuleLoad(node)) {
      const [specifier] = node.arguments;
      if (specifier && ts.isStringLiteral(specifier) && DRIVERS.test(specifier.text)) found.push(finding(source, node));
    } else if (
      ts.isCallExpression(node) &&
      ts.isPropertyAccessExpression(node.expression) &&
      RAW_SQL_METHODS.has(node.expression.name.text)
    ) {
      found.push(finding(source, node));
    }
  });
  return found;
}

describe("SQL only in packages/db", () => {
  const sources = productSources().filter((file) => /^apps\/[^/]+\/src\//.test(file));

  it("scans the production sources of every app, against every table of the schema", () => {
    for (const app of ["apps/api/", "apps/worker/", "apps/cli/"]) {
      expect(
        sources.some((file) => file.startsWith(app)),
        app,
      ).toBe(true);
    }
    expect(sources.some((file) => file.endsWith(".test.ts"))).toBe(false);
    expect(TABLES).toContain("webhookDeliveries");
    expect(TABLES.size).toBeGreaterThan(15);
  });

  it("finds no SQL builder, driver, table or raw statement in the apps", () => {
    expect(sources.flatMap((file) => sqlFindings(parseSource(file)))).toEqual([]);
  });

  it("tells SQL from the apps' own code", () => {
    const probe = `
      import { eq } from "drizzle-orm";
      import type { PgColumn } from "drizzle-orm/pg-core";
      import postgres from "postgres";
      import { findGame, games as allGames, type webhooks, type SqlClient } from "@outcomes/db";
      import type { spins } from "@outcomes/db";
      const pg = await import("postgres");
      await client.unsafe<{ n: number }[]>("select 1", [], { prepare: true });
      await db.execute(query);
      cache.delete(key);
      hash.update(body);
      await findGame(db, 1);`;
    const found = sqlFindings(ts.createSourceFile("probe.ts", probe, ts.ScriptTarget.Latest, true));
    expect(found.map((entry) => entry.text)).toEqual([
      'import { eq } from "drizzle-orm";',
      'import type { PgColumn } from "drizzle-orm/pg-core";',
      'import postgres from "postgres";',
      "games as allGames",
      'import("postgres")',
      'client.unsafe<{ n: number }[]>("select 1", [], { prepare: true })',
      "db.execute(query)",
    ]);
  });
});
