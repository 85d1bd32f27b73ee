import { randomBytes } from "node:crypto";
import { cp, mkdir, readdir, readFile, readlink, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Release } from "./release.js";

/** A change to a release's tree: exact text replaced in files, and migrations added after its last. */
export interface Patch {
  /** Path → [text, replacement] pairs; every text must occur, and is replaced wherever it does. */
  replace: Record<string, [string, string][]>;
  /** Migration tag → SQL, appended to drizzle/ and its journal. */
  migrations?: Record<string, string>;
}

/**
 * A throwaway copy of an installed release with `patch` applied, built, sharing the release's
 * install: node_modules links to its packages, except the workspace packages, which link to the
 * copy's own (so the patch is what runs). For the test of the test: a deliberately incompatible
 * "next release". `dispose` removes it.
 */
export async function patchedRelease(
  base: Release,
  label: string,
  patch: Patch,
): Promise<{ release: Release; dispose: () => Promise<void> }> {
  const root = join(tmpdir(), `outcomes-upgrade-${label}-${randomBytes(4).toString("hex")}`);
  const dispose = () => rm(root, { recursive: true, force: true });
  try {
    await cp(base.root, root, {
      recursive: true,
      // Its own install and bundles stay behind (packages' built files, e.g. the SDK's dist/, come along).
      filter: (source) => !["node_modules", "dist", ".complete"].some((name) => source === join(base.root, name)),
    });
    await linkInstall(base.root, root);
    for (const [path, replacements] of Object.entries(patch.replace)) {
      let text = await readFile(join(root, path), "utf8");
      for (const [from, to] of replacements) {
        if (!text.includes(from)) throw new Error(`patch: ${path} has no ${JSON.stringify(from)}`);
        text = text.replaceAll(from, to);
      }
      await writeFile(join(root, path), text);
    }
    for (const [tag, sql] of Object.entries(patch.migrations ?? {})) await appendMigration(root, tag, sql);
    const release = new Release(label, root);
    await release.build();
    return { release, dispose };
  } catch (error) {
    await dispose();
    throw error;
  }
}

/**
 * node_modules of links into the base's install; the workspace packages' links are the base's
 * relative ones (`../../packages/core`), so they lead into the copy. The native hasher's stays on
 * the base's tree, where it was built (its build/ is no part of the commit).
 */
async function linkInstall(base: string, root: string): Promise<void> {
  const modules = join(root, "node_modules");
  await mkdir(join(modules, "@outcomes"), { recursive: true });
  for (const entry of await readdir(join(base, "node_modules"))) {
    if (entry !== "@outcomes") await symlink(join(base, "node_modules", entry), join(modules, entry));
  }
  for (const entry of await readdir(join(base, "node_modules", "@outcomes"))) {
    const link = join(base, "node_modules", "@outcomes", entry);
    await symlink(entry === "sha256-batch" ? link : await readlink(link), join(modules, "@outcomes", entry));
  }
}

async function appendMigration(root: string, tag: string, sql: string): Promise<void> {
  const journalPath = join(root, "drizzle", "meta", "_journal.json");
  const journal = JSON.parse(await readFile(journalPath, "utf8")) as {
    entries: { idx: number; version: string; when: number; tag: string; breakpoints: boolean }[];
  };
  const last = journal.entries.at(-1)!;
  const name = `${String(last.idx + 1).padStart(4, "0")}_${tag}`;
  journal.entries.push({ ...last, idx: last.idx + 1, when: last.when + 1000, tag: name });
  await writeFile(journalPath, JSON.stringify(journal, null, 2));
  await writeFile(join(root, "drizzle", `${name}.sql`), sql);
}
