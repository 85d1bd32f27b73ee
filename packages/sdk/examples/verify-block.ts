/**
 * Verifies a revealed outcome block of the Partner Game Outcome Service from its API, trusting
 * nothing the service says about it:
 *
 *   OUTCOMES_API_KEY=ks_sandbox_… OUTCOMES_BASE_URL=https://outcomes.example.com \
 *     npx tsx verify-block.ts <gameId> <blockId>
 *
 * It fetches the block, its revealed entries (page by page, 1,000 a page: `client.blocks.entries`)
 * and the game's PAR sheet, re-derives every entry from the seed and checks the seed hash and the
 * Merkle root recorded at sealing (verifyRevealedBlock), then fetches the proof of every spin served
 * from the block and checks that it proves that very entry under the same root. Prints what it checked; exit code 0 when everything holds, 1 when not.
 */
import { outcomeText, PartnerClient, verifyInclusion, verifyRevealedBlock } from "@outcomes/sdk";

const [gameId, blockId] = process.argv.slice(2).map(Number);
const apiKey = process.env.OUTCOMES_API_KEY;
const baseUrl = process.env.OUTCOMES_BASE_URL;
if (!apiKey || !baseUrl || !Number.isInteger(gameId) || !Number.isInteger(blockId)) {
  process.stderr.write("usage: OUTCOMES_API_KEY=… OUTCOMES_BASE_URL=… verify-block.ts <gameId> <blockId>\n");
  process.exit(2);
}
const client = new PartnerClient({ apiKey, baseUrl });
const fail = (reason: string): never => {
  console.log(`FAILED: ${reason}`);
  process.exit(1);
};

const block = await client.blocks.get(gameId as number, blockId as number);
// Every page, concatenated: a block of up to 1,000,000 entries takes up to 1,000 requests.
const revealed = await client.blocks.entries(block.gameId, block.blockId);
const game = await client.games.get(block.gameId);
const { document } = await client.parSheets.get(game.parSheetId);

const check = verifyRevealedBlock(block, revealed, document);
if (!check.ok) fail(check.reason);
console.log(`block ${block.blockId}: ${block.size} entries re-derived from the seed; seedHash and merkleRoot match`);

let proven = 0;
for (const entry of revealed.entries) {
  if (entry.spinId === null) continue;
  const proof = await client.spinProof(entry.spinId);
  if (proof.blockId !== block.blockId || proof.index !== entry.index) {
    fail(`spin ${entry.spinId}: the proof is of another entry`);
  }
  if (proof.outcomeText !== outcomeText({ blockId: block.blockId, ...entry })) {
    fail(`spin ${entry.spinId}: the proof is of another outcome`);
  }
  if (proof.merkleRoot !== block.merkleRoot || !verifyInclusion({ ...proof, root: block.merkleRoot as string })) {
    fail(`spin ${entry.spinId}: the proof does not lead to the block's merkleRoot`);
  }
  proven++;
}
const retired = revealed.entries.length - proven;
console.log(`${proven} spin proofs verified${retired > 0 ? `; ${retired} entries retired unserved` : ""}`);
console.log("ok");
