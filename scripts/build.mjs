// Bundles the API and the worker into dist/apps/{api,worker}/main.js for production (`npm run
// start:api`, `start:worker`, `npm start`, the Docker image). Workspace packages (@outcomes/*, TypeScript
// sources) are inlined; every other package stays an import from node_modules (patched postgres.js
// included). Plain JavaScript on plain node: no tsx loader thread or transpile cache in the process,
// which is most of the difference in resident memory (docs/performance.md). Source maps on, so
// stack traces (with --enable-source-maps) point at the TypeScript. Plain .mjs: runs without tsx.
// The output folders are three levels below the repository like the sources they replace, so
// `new URL("../../../drizzle", import.meta.url)` (packages/db/src/migrate.ts) still finds drizzle/.
// The API's reference viewer (Scalar's browser bundle, a dev dependency: the image installs none) is
// copied beside the API's bundle, where apps/api/src/docs.ts looks first; so are the replay page's assets.
import { copyFileSync, existsSync, mkdirSync, realpathSync, renameSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { build } from "esbuild";

/** The folder of package `name` that Node finds from `from` (the nearest node_modules up), if any. */
function packageFolder(name, from) {
  for (let dir = resolve(from); ; dir = dirname(dir)) {
    const folder = join(dir, "node_modules", name);
    if (existsSync(join(folder, "package.json"))) return realpathSync(folder);
    if (dirname(dir) === dir) return undefined;
  }
}

/**
 * Dependencies stay imports, which Node resolves from the bundle's folder (dist/apps/…, so the
 * repository's node_modules), not from the workspace that imports them. A workspace whose own
 * node_modules holds another version (npm nests one when the root's is taken by another range) would
 * run one version under the tests and another in production: the build refuses, naming the package
 * (declare that version at the root, where the bundle finds it).
 */
const externalDependencies = {
  name: "external-dependencies",
  setup(plugin) {
    plugin.onResolve({ filter: /^[^./]/ }, (args) => {
      // The native hasher stays a package (it loads its .node file from beside itself).
      if (args.path.startsWith("@outcomes/") && args.path !== "@outcomes/sha256-batch") return undefined;
      if (args.path.startsWith("node:")) return { path: args.path, external: true };
      const name = args.path
        .split("/")
        .slice(0, args.path.startsWith("@") ? 2 : 1)
        .join("/");
      const sources = packageFolder(name, args.resolveDir);
      const bundle = packageFolder(name, "dist/apps/api");
      if (sources !== undefined && sources !== bundle) {
        return {
          errors: [
            {
              text: `${name}: the sources use ${sources}, the bundle would use ${bundle ?? "none"} (declare the sources' version in the root package.json)`,
            },
          ],
        };
      }
      return { path: args.path, external: true };
    });
  },
};

const started = performance.now();
const { outputFiles } = await build({
  entryPoints: { "api/main": "apps/api/src/main.ts", "worker/main": "apps/worker/src/main.ts" },
  outdir: "dist/apps",
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  sourcemap: true,
  // Stack traces need the mappings, not the sources: a map without them is 0.34 MB instead of 1.28,
  // and the API's peak RSS 4 MB lower (node keeps the parsed map for the process's life).
  sourcesContent: false,
  logLevel: "warning",
  plugins: [externalDependencies],
  write: false,
});
// Each file is written beside its target and renamed over it (atomic): `start:api` and
// `start:worker` started together both build, and neither may run a half-written bundle.
function replace(path, write) {
  mkdirSync(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}.tmp`;
  write(temporary);
  renameSync(temporary, path);
}
for (const file of outputFiles) replace(file.path, (temporary) => writeFileSync(temporary, file.contents));
const viewer = join(
  dirname(createRequire(new URL("../apps/api/package.json", import.meta.url)).resolve("@scalar/api-reference")),
  "browser",
  "standalone.js",
);
replace("dist/apps/api/scalar-api-reference.js", (temporary) => copyFileSync(viewer, temporary));
// The replay page's script and style sheet, beside the API's bundle where apps/api/src/replay/replay-assets.ts
// looks for them (`new URL(file, import.meta.url)`, the bundle's own folder).
for (const asset of ["replay-check.js", "replay.css"]) {
  replace(`dist/apps/api/${asset}`, (temporary) => copyFileSync(`apps/api/src/replay/${asset}`, temporary));
}
console.log(`built dist/apps/{api,worker}/main.js in ${Math.round(performance.now() - started)} ms`);
