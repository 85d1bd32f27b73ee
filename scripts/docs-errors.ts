/**
 * `npm run docs:errors`: writes docs/errors.md from the code table, the statuses and the per-code
 * guidance (apps/api/src/error-reference.ts). `--check` writes nothing and exits 1 when the file differs.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { errorReferenceMarkdown } from "@outcomes/api/error-reference";

const FILE = new URL("../docs/errors.md", import.meta.url);
const generated = errorReferenceMarkdown();
if (process.argv.includes("--check")) {
  const current = readFileSync(FILE, "utf8");
  if (current !== generated) {
    console.error("docs/errors.md differs from the code: run `npm run docs:errors`");
    process.exit(1);
  }
} else {
  writeFileSync(FILE, generated);
  console.log("wrote docs/errors.md");
}
