import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));

/**
 * The node arguments production runs a service with: the last command of the package.json script
 * (`start:api` is "node scripts/build.mjs && node <flags> dist/apps/api/main.js"), relative to the
 * repository's root, so benches and fault tests run exactly what `npm run start:api`, `npm start`
 * and the image run.
 */
export function productionNodeArgs(script: "start:api" | "start:worker"): string[] {
  const scripts = (JSON.parse(readFileSync(`${ROOT}package.json`, "utf8")) as { scripts: Record<string, string> })
    .scripts;
  const [command, ...args] = (scripts[script] ?? "").split("&&").at(-1)?.trim().split(/\s+/) ?? [];
  if (command !== "node" || args.length === 0) throw new Error(`${script} does not end with a node command`);
  return args;
}

/** Builds this tree's bundles (dist/apps/{api,worker}/main.js), as the start scripts do first. */
export function buildBundles(): void {
  execFileSync(process.execPath, ["scripts/build.mjs"], { cwd: ROOT, stdio: "ignore" });
}
