import { execFile } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { ServiceProcess } from "../../faults/harness/processes.js";

const run = promisify(execFile);

/**
 * The commit of the release deployed before this tree's (the last in RELEASES.md): the one the
 * upgrade test rolls this tree out over. Moved on when a release is cut.
 */
export const PREVIOUS_RELEASE = "3d88f15cc06f4508edcf76ad67b9c8685bb4b997";

/** This working tree: the release being rolled out, whatever it holds when the test runs. */
export const WORKING_TREE = fileURLToPath(new URL("../../../", import.meta.url));

/** A release's code, ready to run: an installed tree whose bundles (`npm run build`) are built. */
export class Release {
  constructor(
    /** "old" or "new" in the figures and process names. */
    readonly label: string,
    readonly root: string,
  ) {}

  /** Its own `npm run db:migrate` (its drizzle/ folder, its migrator). */
  async migrate(databaseUrl: string): Promise<void> {
    await npm(this.root, ["run", "--silent", "db:migrate"], { DATABASE_URL: databaseUrl, LOG_LEVEL: "warn" });
  }

  /** What `npm run start:api` runs once built: the bundle on plain node. */
  api(name: string, env: Record<string, string>): ServiceProcess {
    return new ServiceProcess(
      `${this.label}-${name}`,
      ["--enable-source-maps", "dist/apps/api/main.js"],
      env,
      this.root,
    );
  }

  /** What `npm run start:worker -- --role <role>` runs once built. */
  worker(role: string, env: Record<string, string>): ServiceProcess {
    return new ServiceProcess(
      `${this.label}-worker-${role}`,
      ["--enable-source-maps", "dist/apps/worker/main.js", "--role", role],
      env,
      this.root,
    );
  }

  /** `npm run build`: the bundles the start scripts build before they run them. */
  async build(): Promise<void> {
    await npm(this.root, ["run", "--silent", "build"]);
  }
}

async function npm(cwd: string, args: string[], env: Record<string, string> = {}): Promise<void> {
  try {
    await run("npm", args, { cwd, env: { ...process.env, ...env }, maxBuffer: 64 * 1024 * 1024 });
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`npm ${args.join(" ")} in ${cwd} failed:\n${stdout ?? ""}${stderr ?? ""}`);
  }
}

/** Where installed releases are kept between runs (CI's clones are fresh; the machine's $HOME is not). */
export function releaseCache(): string {
  return join(process.env.XDG_CACHE_HOME || join(homedir(), ".cache"), "outcomes-upgrade");
}

/**
 * The tree of `commit` with its own `npm ci` and bundles, made once and kept under the cache,
 * named by the commit, the hash of its lockfile and the Node ABI (the native hasher is built for
 * one). A plain export of the commit (`git archive`), not a `git worktree`: a worktree stays tied to
 * the clone that made it, and CI's clone of the next run is another one. Made in a folder of its
 * own and renamed into place when complete, so a run that stops half-way, or two runs at once,
 * never leave or use half an install.
 */
export async function installedRelease(label: string, commit: string): Promise<Release> {
  const lockfile = await gitShow(commit, "package-lock.json");
  const lockHash = createHash("sha256").update(lockfile).digest("hex").slice(0, 12);
  const dir = join(releaseCache(), `${commit.slice(0, 12)}-${lockHash}-abi${process.versions.modules}`);
  const release = new Release(label, dir);
  pruneReleaseCache(dir);
  if (existsSync(join(dir, ".complete"))) return release;

  mkdirSync(releaseCache(), { recursive: true });
  const partial = `${dir}.partial-${process.pid}-${randomBytes(3).toString("hex")}`;
  try {
    mkdirSync(partial);
    await exportCommit(commit, partial);
    await npm(partial, ["ci", "--no-audit", "--no-fund", "--prefer-offline"]);
    await new Release(label, partial).build();
    writeFileSync(join(partial, ".complete"), `${commit}\n`);
    renameSync(partial, dir);
  } catch (error) {
    rmSync(partial, { recursive: true, force: true });
    // Another run completed the same release meanwhile: use it.
    if (existsSync(join(dir, ".complete"))) return release;
    throw error;
  }
  return release;
}

/** Installs unused for this long are removed (a release moved on, a lockfile changed). */
const UNUSED_INSTALL_MS = 14 * 24 * 3600 * 1000;
/** A half-made install this old was left by a run that stopped. */
const ABANDONED_PARTIAL_MS = 24 * 3600 * 1000;

/** Marks `dir` used now and removes the cache's installs unused for two weeks and abandoned halves. */
function pruneReleaseCache(dir: string): void {
  const now = Date.now();
  if (existsSync(join(dir, ".complete"))) utimesSync(join(dir, ".complete"), new Date(now), new Date(now));
  for (const entry of existsSync(releaseCache()) ? readdirSync(releaseCache()) : []) {
    const path = join(releaseCache(), entry);
    if (path === dir) continue;
    const marker = entry.includes(".partial-") ? path : join(path, ".complete");
    const age = now - (existsSync(marker) ? statSync(marker).mtimeMs : 0);
    if (age > (entry.includes(".partial-") ? ABANDONED_PARTIAL_MS : UNUSED_INSTALL_MS)) {
      rmSync(path, { recursive: true, force: true });
    }
  }
}

/** The files of `commit` in `target`; a shallow clone first fetches the commit (by its full id). */
async function exportCommit(commit: string, target: string): Promise<void> {
  await ensureCommit(commit);
  const archive = join(target, ".release.tar");
  await run("git", ["-C", WORKING_TREE, "archive", "--format=tar", `--output=${archive}`, commit]);
  await run("tar", ["-xf", archive, "-C", target]);
  rmSync(archive);
}

async function ensureCommit(commit: string): Promise<void> {
  const present = await run("git", ["-C", WORKING_TREE, "cat-file", "-e", `${commit}^{commit}`]).then(
    () => true,
    () => false,
  );
  if (!present) await run("git", ["-C", WORKING_TREE, "fetch", "--no-tags", "--depth=1", "origin", commit]);
}

async function gitShow(commit: string, path: string): Promise<string> {
  await ensureCommit(commit);
  const { stdout } = await run("git", ["-C", WORKING_TREE, "show", `${commit}:${path}`], {
    maxBuffer: 64 * 1024 * 1024,
  });
  return stdout;
}

/** The working tree as the new release, its bundles built from what it holds now. */
export async function workingTreeRelease(label = "new"): Promise<Release> {
  const release = new Release(label, WORKING_TREE);
  await release.build();
  return release;
}
