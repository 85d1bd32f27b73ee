import {
  assertValidParSheet,
  draftBlock,
  drawIndependentBlock,
  entryProof,
  OutcomeDrawer,
  SAMPLE_PAR_SHEET,
} from "@outcomes/core";
import { testDatabaseForFile } from "@outcomes/testkit/file-fixture";
import { createSpinFixture } from "@outcomes/testkit/spin-rows";
import { describe, expect, it } from "vitest";
import { blocks } from "../schema/blocks.js";
import { spinVerifications } from "./proofs.js";

/**
 * A proof is read as a few hundred bytes of its block, by SQL that names the same bytes as core's
 * `proofReads` (the group's entries, a node per level, the root): against blocks of every shape of
 * tree, each proof read so equals the one core builds from the whole block.
 */
const database = testDatabaseForFile();

describe("spinVerifications", () => {
  it("reads every entry's proof of blocks of 1 to 70 and 1,000 entries as core builds it from the whole block", async () => {
    const { gameIds } = await createSpinFixture(database.db);
    const drawer = new OutcomeDrawer(assertValidParSheet(SAMPLE_PAR_SHEET));
    const sizes = [...Array.from({ length: 70 }, (_, at) => at + 1), 1000];
    for (const [sequence, size] of sizes.entries()) {
      const drawn = drawIndependentBlock(drawer, size);
      const blockId = 5000 + sequence;
      const draft = draftBlock(drawer, drawn, blockId);
      await database.db.insert(blocks).values({
        id: blockId,
        gameId: gameIds[0]!,
        sequence: sequence + 1,
        size,
        entries: draft.entries,
        commitment: draft.commitment,
        seed: drawn.seed,
        seedHash: draft.seedHash,
        merkleRoot: draft.merkleRoot,
        merkleLevels: draft.merkleLevels,
      });
      const indexes = size > 70 ? [0, 15, 16, 17, 511, 512, 998, 999] : Array.from({ length: size }, (_, at) => at);
      const positions = indexes.map((index) => ({ spinId: `spin-${blockId}-${index}`, blockId, index }));
      const read = await spinVerifications(database.db, positions);
      const whole = {
        blockId,
        entries: draft.entries,
        seed: drawn.seed,
        position: 0,
        merkleLevels: draft.merkleLevels,
      };
      for (const position of positions) {
        expect(read.get(position.spinId)?.proof, position.spinId).toEqual({
          ...position,
          ...entryProof(whole, position.index),
        });
        expect(read.get(position.spinId)?.block.merkle_root).toBe(draft.merkleRoot);
      }
    }
  });
});
