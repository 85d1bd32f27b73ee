import { describe, expect, it } from "vitest";
import { CURRENT_RELEASE, overdueGates, RELEASE_GATES } from "./release.js";

describe("release gates", () => {
  it("names a gate overdue from the release that deletes it on", () => {
    const catalog = {
      old: { addedIn: 2, deleteIn: 3, why: "" },
      current: { addedIn: 3, deleteIn: 4, why: "" },
    };
    expect(overdueGates(catalog, 3)).toEqual(["old"]);
    expect(overdueGates(catalog, 4)).toEqual(["old", "current"]);
    expect(overdueGates(catalog, 2)).toEqual([]);
  });

  it("keeps no gate past the release after the one that added it", () => {
    expect(overdueGates(RELEASE_GATES, CURRENT_RELEASE)).toEqual([]);
    for (const [name, gate] of Object.entries(RELEASE_GATES) as [string, { addedIn: number; deleteIn: number }][]) {
      expect({ name, deleteIn: gate.deleteIn }).toEqual({ name, deleteIn: gate.addedIn + 1 });
      expect(gate.addedIn, name).toBeLessThanOrEqual(CURRENT_RELEASE);
    }
  });
});
