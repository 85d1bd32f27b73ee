import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

/**
 * Reads the product sources as TypeScript syntax trees, for the checks that are about how code is
 * written (raw SQL, secret comparisons) rather than what it does.
 */
export const REPO_ROOT = fileURLToPath(new URL("../", import.meta.url));

/** The private workspace package of shared test fixtures: under packages/, but it never ships. */
export const TESTKIT = "tests/kit/";

/** Every TypeScript source under apps/* and packages/* (src and examples), tests and the testkit excluded. */
export function productSources(): string[] {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory() && !["node_modules", "dist"].includes(entry.name)) walk(path);
      else if (entry.isFile() && /\.tsx?$/.test(entry.name) && !/\.test\.tsx?$/.test(entry.name)) {
        files.push(relative(REPO_ROOT, path));
      }
    }
  };
  for (const top of ["apps", "packages"]) {
    for (const entry of readdirSync(join(REPO_ROOT, top), { withFileTypes: true })) {
      for (const sub of ["src", "examples"]) {
        const dir = join(REPO_ROOT, top, entry.name, sub);
        if (entry.isDirectory() && existsSync(dir) && statSync(dir).isDirectory()) walk(dir);
      }
    }
  }
  return files.filter((file) => !file.startsWith(TESTKIT)).sort();
}

export interface Finding {
  file: string;
  line: number;
  /** The offending expression as written (whitespace collapsed). */
  text: string;
}

export function parseSource(file: string): ts.SourceFile {
  return ts.createSourceFile(file, readFileSync(join(REPO_ROOT, file), "utf8"), ts.ScriptTarget.Latest, true);
}

export function finding(source: ts.SourceFile, node: ts.Node): Finding {
  const { line } = source.getLineAndCharacterOfPosition(node.getStart(source));
  return { file: source.fileName, line: line + 1, text: node.getText(source).replace(/\s+/g, " ") };
}

export function visit(source: ts.SourceFile, each: (node: ts.Node) => void) {
  const walk = (node: ts.Node) => {
    each(node);
    ts.forEachChild(node, walk);
  };
  walk(source);
}

/** The `const` initialisers of a file, by name (any scope: names are not reused for SQL text). */
function constants(source: ts.SourceFile): Map<string, ts.Expression> {
  const found = new Map<string, ts.Expression>();
  visit(source, (node) => {
    if (
      ts.isVariableDeclaration(node) &&
      ts.isIdentifier(node.name) &&
      node.initializer &&
      ts.isVariableDeclarationList(node.parent) &&
      (node.parent.flags & ts.NodeFlags.Const) !== 0
    ) {
      found.set(node.name.text, node.initializer);
    }
  });
  return found;
}

/**
 * Whether an expression's value is fixed in the source text: literals, and templates, `+` joins
 * and `const`s built only from them. Such text cannot carry a caller's input.
 */
export function isConstantText(source: ts.SourceFile, node: ts.Expression, seen = new Set<string>()): boolean {
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isNumericLiteral(node)) return true;
  if (ts.isParenthesizedExpression(node)) return isConstantText(source, node.expression, seen);
  if (ts.isTemplateExpression(node)) {
    return node.templateSpans.every((span) => isConstantText(source, span.expression, seen));
  }
  if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.PlusToken) {
    return isConstantText(source, node.left, seen) && isConstantText(source, node.right, seen);
  }
  if (ts.isIdentifier(node) && !seen.has(node.text)) {
    const initializer = constants(source).get(node.text);
    return initializer !== undefined && isConstantText(source, initializer, new Set([...seen, node.text]));
  }
  return false;
}

/** The name an operand is known by: `x` for `x`, `hash` for `record.hash` or `record?.hash`. */
export function operandName(node: ts.Expression): string | null {
  if (ts.isIdentifier(node)) return node.text;
  if (ts.isPropertyAccessExpression(node)) return node.name.text;
  if (ts.isParenthesizedExpression(node) || ts.isNonNullExpression(node)) return operandName(node.expression);
  return null;
}
