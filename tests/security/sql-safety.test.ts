import ts from "typescript";
import { describe, expect, it } from "vitest";
import { type Finding, finding, isConstantText, parseSource, productSources, visit } from "../source-scan.js";

/**
 * SQL is built only through drizzle and postgres.js parameters (issue 8, item 6). Three calls take
 * SQL text as it is: postgres.js `x.unsafe(text, params)`, drizzle's `sql.raw(text)` and
 * `db.execute(text)` given a string. Each is allowed only with text fixed in the source (values go
 * in as parameters); any other use must be listed below, with the reason it is safe.
 */
const ALLOWED: Array<{ file: string; contains: string; why: string }> = [
  {
    file: "packages/db/src/migrate.ts",
    contains: "create database",
    why: "CREATE DATABASE takes no parameters; the name comes from DATABASE_URL (operator config) and is quoted",
  },
  {
    file: "packages/db/src/migrate.ts",
    contains: ".unsafe(statement)",
    why: "a migration's statements, read from drizzle/ in the repository: the migration files are the SQL",
  },
  {
    file: "packages/db/src/client.ts",
    contains: "target.unsafe(...args)",
    why: "the pool's acquire-timeout wrapper passes every caller's unsafe() through unchanged",
  },
  {
    file: "packages/db/src/repositories/sql-client.ts",
    contains: "on.unsafe<",
    why: "rowsOf runs the text drizzle renders from a sql`…` template, whose values are all parameters (drizzle's own execute does the same)",
  },
  {
    file: "packages/db/src/repositories/record-spins.ts",
    contains: "client.unsafe<batchrow[]>(",
    why: "the batch statements are fixed text of this file and of player-figures.ts (a spin's move of its player's figures, shared with the void); values are parameters",
  },
  {
    file: "packages/db/src/repositories/spin-voids.ts",
    contains: "sql.raw(",
    why: "player-figures.ts's and protection-checks.ts's fixed text (a spin's move of its player's figures, and of his period figures, written once for the spin batch and the void)",
  },
  {
    file: "packages/db/src/repositories/api-keys.ts",
    contains: "sql.raw(partner_protected_sql)",
    why: "player-protections.ts's fixed text (whether a partner's spins are checked), shared with nothing user-given",
  },
  {
    file: "packages/db/src/repositories/player-protections.ts",
    contains: ".unsafe",
    why: "column lists built from the fixed PROTECTION_SETTINGS of the schema; every value is a parameter",
  },
];

function calleeName(call: ts.CallExpression): { object: string | null; method: string } | null {
  const callee = call.expression;
  if (!ts.isPropertyAccessExpression(callee)) return null;
  const object = ts.isIdentifier(callee.expression) ? callee.expression.text : null;
  return { object, method: callee.name.text };
}

/** A string argument: raw SQL (a tagged template or drizzle SQL object is not one). */
function isStringExpression(node: ts.Expression): boolean {
  return (
    ts.isStringLiteral(node) ||
    ts.isNoSubstitutionTemplateLiteral(node) ||
    ts.isTemplateExpression(node) ||
    (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.PlusToken)
  );
}

/** Every raw-SQL call whose text is not fixed in the source. */
function rawSqlFindings(source: ts.SourceFile): Finding[] {
  const found: Finding[] = [];
  visit(source, (node) => {
    if (!ts.isCallExpression(node)) return;
    const name = calleeName(node);
    const [text] = node.arguments;
    if (!name || !text) return;
    const raw =
      name.method === "unsafe" ||
      (name.method === "raw" && name.object === "sql") ||
      (name.method === "execute" && isStringExpression(text));
    if (raw && !isConstantText(source, text)) found.push(finding(source, node));
  });
  return found;
}

describe("SQL only through parameters", () => {
  const sources = productSources();
  const findings = sources.flatMap((file) => rawSqlFindings(parseSource(file)));

  it("scans the product sources of every app and package", () => {
    expect(sources.length).toBeGreaterThan(100);
    for (const top of ["apps/api/", "apps/worker/", "apps/cli/", "packages/db/", "packages/core/"]) {
      expect(
        sources.some((file) => file.startsWith(top)),
        top,
      ).toBe(true);
    }
    expect(sources.some((file) => file.endsWith(".test.ts"))).toBe(false);
  });

  it("finds raw SQL with interpolated text only where the allow-list says why", () => {
    const allowed = (entry: Finding) =>
      ALLOWED.some((rule) => rule.file === entry.file && entry.text.toLowerCase().includes(rule.contains));
    expect(findings.filter((entry) => !allowed(entry))).toEqual([]);
    // Every entry of the list still matches something: a stale entry would hide a new call later.
    for (const rule of ALLOWED) {
      expect(
        findings.some((entry) => entry.file === rule.file && entry.text.toLowerCase().includes(rule.contains)),
        `${rule.file}: ${rule.contains}`,
      ).toBe(true);
    }
  });

  it("tells constant SQL text from interpolated text", () => {
    const probe = `
      const WINDOW = "interval '1 day'";
      const FIND = \`select 1 where at > now() - \${WINDOW}\`;
      tx.unsafe(FIND, [id]);
      sql.raw(WINDOW);
      db.execute(sql\`select \${id}\`);
      tx.unsafe(\`select * from t where id = '\${id}'\`);
      db.execute("delete from t where id = " + id);
      sql.raw(input);`;
    const found = rawSqlFindings(ts.createSourceFile("probe.ts", probe, ts.ScriptTarget.Latest, true));
    expect(found.map((entry) => entry.text)).toEqual([
      expect.stringMatching(/^tx\.unsafe\(`select \* from t where id = '\$\{id\}'`\)$/),
      'db.execute("delete from t where id = " + id)',
      "sql.raw(input)",
    ]);
  });
});
