import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeOpenDeployments } from "./harness/deployment.js";
import {
  installedRelease,
  PREVIOUS_RELEASE,
  type Release,
  WORKING_TREE,
  workingTreeRelease,
} from "./harness/release.js";
import { rollingUpgrade } from "./harness/rollout.js";

/** Four times the API's Postgres pool (10 connections, apps/api/src/build-api.ts). */
const CLIENTS = 40;

let previous: Release;
let next: Release;

beforeAll(async () => {
  [previous, next] = await Promise.all([installedRelease("old", PREVIOUS_RELEASE), workingTreeRelease("new")]);
});
afterAll(closeOpenDeployments);

describe("a rolling upgrade from the previous release to this tree, and back", () => {
  it("is listed in RELEASES.md", () => {
    expect(readFileSync(join(WORKING_TREE, "RELEASES.md"), "utf8")).toContain(PREVIOUS_RELEASE.slice(0, 7));
  });

  it("answers every spin, serves no outcome twice, replays every key on either release, keeps balances and delivers each event once", async () => {
    const report = await rollingUpgrade({
      from: previous,
      to: next,
      rollback: true,
      stageMs: 3_000,
      clients: CLIENTS,
      log: (line) => console.log(`UPGRADE ${line}`),
    });
    console.log(`UPGRADE figures: ${JSON.stringify(report.figures)}`);
    for (const line of report.summary) console.log(`UPGRADE ${line}`);
    expect(report.violations).toEqual([]);
  });
});
