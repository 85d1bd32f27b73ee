import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeOpenDeployments } from "./harness/deployment.js";
import { type Patch, patchedRelease } from "./harness/patched.js";
import { installedRelease, PREVIOUS_RELEASE, type Release } from "./harness/release.js";
import { rollingUpgrade } from "./harness/rollout.js";

// The test of the upgrade test: a "next release" made incompatible on purpose, in the two ways
// docs/redis-cluster.md describes for the stop-the-world releases, rolled out over the previous
// release by the same harness, must be reported. The patches apply to the previous release's own
// tree (a fixed commit), so they keep applying whatever main becomes. Both are in one release, one
// rollout (the cost of a second one is CI time); each is recognised by its own report.

/** The next release renames a column the previous release writes on every spin (expand-only broken). */
const RENAMED_COLUMN: Patch = {
  replace: {
    "packages/db/src/schema/players.ts": [['at("updated_at")', 'at("last_spin_at")']],
    "packages/db/src/repositories/spin-batch.ts": [["updated_at", "last_spin_at"]],
  },
  migrations: { players_last_spin_at: 'ALTER TABLE "players" RENAME COLUMN "updated_at" TO "last_spin_at";' },
};

/** Template text of the patched sources (`$` + `{` spelled apart, as it is code, not a template here). */
const code = (text: string) => text.replaceAll("$(", "${").replaceAll(")$", "}");

/**
 * The next release writes queue items in a form only it reads (compact items with another mark),
 * unconditionally: the previous release's API cannot read what it pops.
 */
const NEW_QUEUE_ITEMS: Patch = {
  replace: {
    "packages/core/src/par/entries.ts": [[code("ascii(`~$(blockId)$.`)"), code("ascii(`^$(blockId)$.`)")]],
    "packages/core/src/outcome.ts": [
      ["const COMPACT_ITEM = /^~(", "const COMPACT_ITEM = /^[~^]("],
      [code("return `~$(blockId)$.`;"), code("return `^$(blockId)$.`;")],
    ],
  },
};

let previous: Release;
let dispose: (() => Promise<void>) | undefined;

beforeAll(async () => {
  previous = await installedRelease("old", PREVIOUS_RELEASE);
});
afterAll(async () => {
  await closeOpenDeployments();
  await dispose?.();
});

describe("the upgrade test on a deliberately incompatible next release", () => {
  it("reports the previous release's failed spins (renamed column) and the outcomes it dropped (new queue items)", async () => {
    const patched = await patchedRelease(previous, "incompatible", {
      replace: { ...RENAMED_COLUMN.replace, ...NEW_QUEUE_ITEMS.replace },
      migrations: RENAMED_COLUMN.migrations,
    });
    dispose = patched.dispose;
    const report = await rollingUpgrade({
      from: previous,
      to: patched.release,
      rollback: false,
      stageMs: 2_000,
      clients: 40,
      // Breaches are expected: what does not happen within 5 s is reported, rather than waited for.
      patienceMs: 5_000,
      log: (line) => console.log(`UPGRADE ${line}`),
    });
    const violations = report.violations.join("\n");
    console.log(`UPGRADE incompatible: ${report.violations.length} violations\n${violations}`);
    expect(violations).toMatch(/upgrade: \d+ spin requests not answered 200 or 503 KS-4203: .*"500 KS-500\d old"/);
    expect(violations).toMatch(/upgrade: \d+ outcomes neither queued nor used \(stranded\)/);
  });
});
