import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { RETIRE_AFTER_MS, RETIRE_SETTLE_MS } from "@outcomes/blocks";
import { EntryCodec, parseQueueItem, SAMPLE_PAR_SHEET, sampleParSheet } from "@outcomes/core";
import { blocks } from "@outcomes/db";
import {
  type ParSheetDocument,
  PartnerClient,
  type Block as SdkBlock,
  type RevealedEntries as SdkRevealedEntries,
  type SpinProof as SdkSpinProof,
  type SpinResult as SdkSpinResult,
  verifyRevealedBlock,
  verifySpinProof,
} from "@outcomes/sdk";
import { testApiForFile } from "@outcomes/testkit/file-fixture";
import { fillTestGameQueue, registerTestGame, revealTestBlocks } from "@outcomes/testkit/games";
import { referenceLeaf, referencePath, referenceRoot } from "@outcomes/testkit/merkle-reference";
import { addBlock, createGame, issueKey } from "@outcomes/testkit/spin-path";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { OutcomeTaker } from "../../spins/outcome-taker.js";

const BLOCK_SIZE = 37;
const api = testApiForFile({ BLOCK_SIZE: String(BLOCK_SIZE), MIN_READY_BLOCKS: "1", TARGET_READY_BLOCKS: "2" });

const HEX_HASH = /^[0-9a-f]{64}$/;
const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex");
const sdkFor = (apiKey: string) => new PartnerClient({ apiKey, baseUrl: api.baseUrl });

/** The contract's leaf preimage, written here independently of the SDK: salt ‖ UTF-8(B|i|tier|multiplier|reels). */
function leafData(blockId: number, entry: SdkRevealedEntries["entries"][number]): Buffer {
  const reels = entry.reelSymbols.map((reel) => reel.join(",")).join("/");
  const text = `${blockId}|${entry.index}|${entry.prizeTier}|${entry.multiplier}|${reels}`;
  return Buffer.concat([Buffer.from(entry.salt, "hex"), Buffer.from(text, "utf8")]);
}

const flipLastHexDigit = (value: string) => `${value.slice(0, -1)}${value.endsWith("0") ? "1" : "0"}`;

async function spinAll(client: PartnerClient, gameId: number, count: number): Promise<SdkSpinResult[]> {
  const spins: SdkSpinResult[] = [];
  for (let spin = 0; spin < count; spin++)
    spins.push(await client.spin({ gameId, playerId: "fair-player", wagerUsd: 1 }));
  return spins;
}

describe("provable fairness", () => {
  it("spins a block dry; every proof and the reveal verify with the SDK and with independent code; tampering fails", async () => {
    const game = await registerTestGame(api);
    const client = sdkFor(game.apiKey);
    const listed = await client.blocks.list(game.gameId);
    expect(listed).toMatchObject({ page: 1, limit: 20, total: 2 });
    expect(listed.blocks.map((block) => block.sequence)).toEqual([2, 1]);
    const sealed = listed.blocks[1] as SdkBlock;
    expect(sealed).toMatchObject({
      gameId: game.gameId,
      size: BLOCK_SIZE,
      status: "ready",
      drawMode: "independent",
      firstServedAt: null,
      exhaustedAt: null,
      revealedAt: null,
      seed: null,
    });
    expect(sealed.merkleRoot).toMatch(HEX_HASH);
    expect(sealed.seedHash).toMatch(HEX_HASH);
    expect(sealed).not.toHaveProperty("cycle");

    const spins = await spinAll(client, game.gameId, BLOCK_SIZE);
    expect(spins.map((spin) => spin.fairness)).toEqual(spins.map((_, index) => ({ blockId: sealed.blockId, index })));
    // Every entry served, the sweep not run yet: committed, not revealed.
    await expect(client.blocks.entries(game.gameId, sealed.blockId)).rejects.toMatchObject({
      status: 409,
      errorCode: "KS-4216",
    });
    const served = await client.blocks.get(game.gameId, sealed.blockId);
    expect(served).toMatchObject({
      status: "serving",
      merkleRoot: sealed.merkleRoot,
      seedHash: sealed.seedHash,
      seed: null,
    });
    expect(Date.parse(served.firstServedAt as string)).toBeGreaterThanOrEqual(Date.parse(served.sealedAt));
    const proofs = await Promise.all(spins.map((spin) => client.spinProof(spin.spinId)));
    proofs.forEach((proof, index) => {
      expect(proof).toMatchObject({
        spinId: spins[index]?.spinId,
        blockId: sealed.blockId,
        index,
        treeSize: BLOCK_SIZE,
      });
      expect(verifySpinProof(spins[index] as SdkSpinResult, proof, served)).toEqual({ ok: true, reason: null });
    });

    expect(await revealTestBlocks(api)).toMatchObject({ closedBlocks: 1, revealedBlocks: 1, retiredOutcomes: 0 });
    const block = await client.blocks.get(game.gameId, sealed.blockId);
    expect(block).toMatchObject({ status: "exhausted", merkleRoot: sealed.merkleRoot, seedHash: sealed.seedHash });
    expect(block.exhaustedAt).not.toBeNull();
    expect(block.revealedAt).not.toBeNull();
    expect(
      createHash("sha256")
        .update(Buffer.from(block.seed as string, "hex"))
        .digest("hex"),
    ).toBe(block.seedHash);
    const revealed = await client.blocks.entries(game.gameId, sealed.blockId);
    expect(revealed).toMatchObject({ blockId: sealed.blockId, seed: block.seed });
    expect(revealed.entries.map((entry) => entry.spinId)).toEqual(spins.map((spin) => spin.spinId));
    spins.forEach((spin, index) => {
      const entry = revealed.entries[index];
      expect([spin.outcome.prizeTier, spin.outcome.multiplier, spin.presentation.reelSymbols]).toEqual([
        entry?.prizeTier,
        entry?.multiplier,
        entry?.reelSymbols,
      ]);
    });

    // One page of them, as the API answers it: `total` is the block's size.
    const page = await client.blocks.entriesPage(game.gameId, sealed.blockId, { page: 2, limit: 10 });
    expect(page).toEqual({
      ...revealed,
      entries: revealed.entries.slice(10, 20),
      page: 2,
      limit: 10,
      total: BLOCK_SIZE,
    });

    // The SDK re-derives every entry from the seed and the PAR sheet, and checks both commitments.
    expect(verifyRevealedBlock(block, revealed, SAMPLE_PAR_SHEET)).toEqual({ ok: true, reason: null });
    proofs.forEach((proof, index) => {
      expect(verifySpinProof(spins[index] as SdkSpinResult, proof, block)).toEqual({ ok: true, reason: null });
    });
    // The independent RFC 9162 code agrees on the root, every leaf and every audit path.
    const data = revealed.entries.map((entry) => leafData(block.blockId, entry));
    expect(hex(referenceRoot(data))).toBe(block.merkleRoot);
    proofs.forEach((proof, index) => {
      expect(proof.outcomeText).toBe(data[index]?.subarray(16).toString("utf8"));
      expect(proof.leaf).toBe(hex(referenceLeaf(data[index] as Buffer)));
      expect(proof.auditPath).toEqual(referencePath(index, data).map(hex));
    });

    // Tampering with one entry, one salt, the seed or one path element fails, saying where.
    const entryTampered = structuredClone(revealed);
    const window = entryTampered.entries[5]?.reelSymbols[0] as string[];
    window[0] = window[0] === "SEVEN" ? "BLANK" : "SEVEN";
    expect(verifyRevealedBlock(block, entryTampered, SAMPLE_PAR_SHEET)).toEqual({
      ok: false,
      reason: expect.stringMatching(/^entry 5: reelSymbols .* is not the .* the seed derives$/),
    });
    expect(hex(referenceRoot(entryTampered.entries.map((entry) => leafData(block.blockId, entry))))).not.toBe(
      block.merkleRoot,
    );
    const saltTampered = structuredClone(revealed);
    const salted = saltTampered.entries[9] as SdkRevealedEntries["entries"][number];
    salted.salt = flipLastHexDigit(salted.salt);
    expect(verifyRevealedBlock(block, saltTampered, SAMPLE_PAR_SHEET)).toEqual({
      ok: false,
      reason: expect.stringMatching(/^entry 9: salt /),
    });
    expect(hex(referenceRoot(saltTampered.entries.map((entry) => leafData(block.blockId, entry))))).not.toBe(
      block.merkleRoot,
    );
    const otherSeed = flipLastHexDigit(block.seed as string);
    expect(
      verifyRevealedBlock({ ...block, seed: otherSeed }, { ...revealed, seed: otherSeed }, SAMPLE_PAR_SHEET),
    ).toEqual({
      ok: false,
      reason: "SHA-256(seed) is not the block's committed seedHash",
    });
    const proof = proofs[3] as SdkSpinProof;
    const pathTampered = {
      ...proof,
      auditPath: proof.auditPath.map((node, at) => (at === 2 ? flipLastHexDigit(node) : node)),
    };
    expect(verifySpinProof(spins[3] as SdkSpinResult, pathTampered, block)).toEqual({
      ok: false,
      reason: "the audit path does not lead from the leaf to the block's merkleRoot",
    });
    expect(pathTampered.auditPath).not.toEqual(referencePath(3, data).map(hex));
    const outcomeTampered = {
      ...(spins[3] as SdkSpinResult),
      outcome: { prizeTier: "T6", multiplier: 1000, payoutUsd: 1000 },
    };
    expect(verifySpinProof(outcomeTampered, proof, block)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^the proof's outcomeText .* is not the spin's outcome/),
    });
  });

  it("the SDK's example verifies a revealed block from the API, and catches an entry changed in the record", async () => {
    const game = await registerTestGame(api);
    const spins = await spinAll(sdkFor(game.apiKey), game.gameId, BLOCK_SIZE);
    await revealTestBlocks(api);
    const blockId = spins[0]?.fairness?.blockId as number;
    const example = fileURLToPath(new URL("../../../../../packages/sdk/examples/verify-block.ts", import.meta.url));
    const run = () =>
      promisify(execFile)(process.execPath, ["--import", "tsx", example, String(game.gameId), String(blockId)], {
        env: { ...process.env, OUTCOMES_API_KEY: game.apiKey, OUTCOMES_BASE_URL: api.baseUrl },
      }).then(
        ({ stdout }) => ({ code: 0, stdout }),
        (error: { code: number; stdout: string }) => ({ code: error.code, stdout: error.stdout }),
      );
    const verified = await run();
    expect(verified.stdout).toContain(`block ${blockId}: ${BLOCK_SIZE} entries re-derived from the seed`);
    expect(verified.stdout).toContain(`${BLOCK_SIZE} spin proofs verified`);
    expect(verified.code).toBe(0);

    // Someone with database access changes one symbol of entry 7 after the fact.
    const [row] = await api.database.db.select().from(blocks).where(eq(blocks.id, blockId));
    const entries = Buffer.from(row?.entries as Buffer);
    const { codec, bodyStart } = EntryCodec.read(entries);
    const cell = bodyStart + 7 * codec.entryBytes + 1;
    entries[cell] = ((entries[cell] as number) + 1) % SAMPLE_PAR_SHEET.symbols.length;
    await api.database.db.update(blocks).set({ entries }).where(eq(blocks.id, blockId));
    const caught = await run();
    expect(caught.stdout).toMatch(/FAILED: entry 7: reelSymbols/);
    expect(caught.code).toBe(1);
  });

  it("reveals a finite_pool cycle once every block of it is exhausted; each block re-derives from the cycle's seed", async () => {
    // A cycle of 100 (52 × T0, 48 × 2×: RTP exactly 0.96), cut into blocks of 37, 37 and 26.
    const sheet = sampleParSheet();
    sheet.drawMode = "finite_pool";
    sheet.prizeTiers = [
      { tier: "T0", multiplier: 0, weight: 52 },
      { tier: "T1", multiplier: 2, weight: 48 },
    ];
    sheet.combinations = [{ tier: "T1", symbols: ["LEMON", "LEMON", "LEMON"], weight: 1 }];
    const game = await registerTestGame(api, { sheet });
    const client = sdkFor(game.apiKey);
    const spins = await spinAll(client, game.gameId, 2 * BLOCK_SIZE);
    await fillTestGameQueue(api, game.gameId);
    expect(await revealTestBlocks(api)).toMatchObject({ closedBlocks: 2, revealedBlocks: 0, revealedCycles: 0 });
    const [first] = (await client.blocks.list(game.gameId, { limit: 100 })).blocks.slice(-1);
    expect(first).toMatchObject({ status: "exhausted", drawMode: "finite_pool", seed: null });
    expect(first?.cycle).toMatchObject({ cycleId: 1, seedHash: first?.seedHash, revealed: false, offset: 0 });
    await expect(client.blocks.entries(game.gameId, first?.blockId as number)).rejects.toMatchObject({
      errorCode: "KS-4216",
    });

    spins.push(...(await spinAll(client, game.gameId, 100 - 2 * BLOCK_SIZE)));
    expect(await revealTestBlocks(api)).toMatchObject({ closedBlocks: 1, revealedBlocks: 3, revealedCycles: 1 });
    const cycle = (await client.blocks.list(game.gameId, { limit: 100 })).blocks.filter(
      (block) => block.cycle?.cycleId === 1,
    );
    expect(cycle.map((block) => [block.size, block.cycle?.offset, block.cycle?.blocks, block.cycle?.revealed])).toEqual(
      [
        [26, 74, 3, true],
        [37, 37, 3, true],
        [37, 0, 3, true],
      ],
    );
    const tiers = new Map<string, number>();
    for (const block of cycle) {
      expect(block.seed).toBe(cycle[0]?.seed);
      const revealed = await client.blocks.entries(game.gameId, block.blockId);
      expect(verifyRevealedBlock(block, revealed, sheet as ParSheetDocument)).toEqual({ ok: true, reason: null });
      for (const entry of revealed.entries) tiers.set(entry.prizeTier, (tiers.get(entry.prizeTier) ?? 0) + 1);
    }
    expect(Object.fromEntries(tiers)).toEqual({ T0: 52, T1: 48 });
    const last = spins.at(-1) as SdkSpinResult;
    const lastBlock = cycle.find((block) => block.blockId === last.fairness?.blockId) as SdkBlock;
    expect(verifySpinProof(last, await client.spinProof(last.spinId), lastBlock)).toEqual({ ok: true, reason: null });
  });

  it("retires an outcome stranded by a crash: listed with spinId null once the block is revealed, never queued again", async () => {
    const game = await registerTestGame(api);
    const client = sdkFor(game.apiKey);
    const owner = await api.gameOwner(game.gameId);
    const queue = api.deps.keys.outcomeQueue(owner);
    await spinAll(client, game.gameId, 3);
    // An API process took index 3 and died before its spin committed.
    const stranded = (await api.deps.redis.lpop(queue)) as string;
    await spinAll(client, game.gameId, BLOCK_SIZE - 4);
    const { blockId } = parseQueueItem(stranded);
    const start = Date.now();
    expect(await revealTestBlocks(api, start)).toMatchObject({ closedBlocks: 0, waitingBlocks: 1 });
    expect((await client.blocks.get(game.gameId, blockId)).status).toBe("serving");
    // Given back (a spin failed with it) and then nobody played: it waits at the front of the queue.
    await api.deps.redis.lpush(queue, stranded);
    const retiring = start + RETIRE_AFTER_MS + 1;
    expect(await revealTestBlocks(api, retiring)).toMatchObject({ closedBlocks: 0, waitingBlocks: 1 });
    expect(await api.deps.redis.lrange(queue, 0, -1)).not.toContain(stranded);
    const retiredMarker = api.deps.keys.outcomesRetired(owner, blockId);
    expect(await api.deps.redis.exists(retiredMarker)).toBe(1);
    // A spin in flight with it fails now: the entry is dropped, not given back.
    await new OutcomeTaker(api.deps.limiter, api.deps.redis, api.deps.keys).giveBack({
      raw: stranded,
      game: owner,
      remaining: 0,
    });
    expect(await api.deps.redis.lrange(queue, 0, -1)).not.toContain(stranded);

    const sweep = await revealTestBlocks(api, retiring + RETIRE_SETTLE_MS);
    expect(sweep).toMatchObject({ closedBlocks: 1, revealedBlocks: 1, retiredOutcomes: 1 });
    const block = await client.blocks.get(game.gameId, blockId);
    expect(block.status).toBe("exhausted");
    const revealed = await client.blocks.entries(game.gameId, blockId);
    expect(revealed.entries.filter((entry) => entry.spinId === null).map((entry) => entry.index)).toEqual([3]);
    expect(verifyRevealedBlock(block, revealed, SAMPLE_PAR_SHEET)).toEqual({ ok: true, reason: null });
    // Redis loses the list: the rebuild from Postgres leaves the closed block out.
    await api.deps.redis.del(queue, `${queue}:loaded-through`);
    await fillTestGameQueue(api, game.gameId);
    const rebuilt = (await api.deps.redis.lrange(queue, 0, -1)).map((item) => parseQueueItem(item).blockId);
    expect(rebuilt).not.toContain(blockId);
  });

  it("shows blocks sealed before provable fairness with null commitments, and has no proof of their spins", async () => {
    const { partnerId, apiKey } = await api.createPartner();
    const { gameId } = await createGame(api, partnerId);
    const [outcome] = await addBlock(api, gameId, [["T1", 2]]);
    const client = sdkFor(apiKey);
    const [spin] = await spinAll(client, gameId, 1);
    expect(spin?.fairness).toEqual({ blockId: outcome?.blockId, index: 0 });
    expect(await client.blocks.get(gameId, outcome?.blockId as number)).toMatchObject({
      status: "exhausted",
      merkleRoot: null,
      seedHash: null,
      seed: null,
      revealedAt: null,
    });
    await expect(client.blocks.entries(gameId, outcome?.blockId as number)).rejects.toMatchObject({
      status: 409,
      errorCode: "KS-4216",
      message: expect.stringMatching(/sealed before provable fairness/),
    });
    await expect(client.spinProof(spin?.spinId as string)).rejects.toMatchObject({
      status: 404,
      errorCode: "KS-4215",
      message: expect.stringMatching(/sealed before provable fairness/),
    });
    expect(await revealTestBlocks(api)).toMatchObject({ closedBlocks: 0 });
  });

  it("answers another partner's or environment's game 403 KS-4006, unknown blocks and spins 404 KS-4215", async () => {
    const game = await registerTestGame(api);
    const [spin] = await spinAll(sdkFor(game.apiKey), game.gameId, 1);
    const blockId = spin?.fairness?.blockId as number;
    const other = await api.createPartner();
    const production = await issueKey(api, game.partnerId, "production");
    for (const apiKey of [other.apiKey, production]) {
      for (const path of [
        `/games/${game.gameId}/blocks`,
        `/games/${game.gameId}/blocks/${blockId}`,
        `/games/${game.gameId}/blocks/${blockId}/entries?page=2&limit=10`,
      ]) {
        const answer = await api.request(`/api/partner/v1${path}`, { apiKey });
        expect([answer.status, answer.body.errorCode], path).toEqual([403, "KS-4006"]);
      }
      const proof = await api.request(`/api/partner/v1/spins/${spin?.spinId}/proof`, { apiKey });
      expect([proof.status, proof.body.errorCode]).toEqual([404, "KS-4215"]);
    }
    const otherGame = await registerTestGame(api, { partner: game, fill: false });
    for (const path of [
      `/games/${otherGame.gameId}/blocks/${blockId}`,
      `/games/${game.gameId}/blocks/0`,
      `/games/${game.gameId}/blocks/abc`,
      `/games/${game.gameId}/blocks/99999999999/entries`,
      `/games/${otherGame.gameId}/blocks/${blockId}/entries`,
      "/spins/spn_unknown/proof",
      "/spins/%00/proof",
    ]) {
      const answer = await api.request(`/api/partner/v1${path}`, { apiKey: game.apiKey });
      expect([answer.status, answer.body.errorCode], path).toEqual([404, "KS-4215"]);
    }
    const page = await api.request(`/api/partner/v1/games/${game.gameId}/blocks?page=2&limit=1`, {
      apiKey: game.apiKey,
    });
    expect(page.body).toMatchObject({ page: 2, limit: 1, total: 2, blocks: [{ blockId, sequence: 1 }] });
    // Past the last page, and a game with no blocks: no rows, the total still counted.
    for (const [path, expected] of [
      [`/games/${game.gameId}/blocks?page=3&limit=1`, { blocks: [], page: 3, limit: 1, total: 2 }],
      [`/games/${otherGame.gameId}/blocks`, { blocks: [], page: 1, limit: 20, total: 0 }],
    ] as const) {
      const empty = await api.request(`/api/partner/v1${path}`, { apiKey: game.apiKey });
      expect([empty.status, empty.body], path).toEqual([200, expected]);
    }
    const bad = await api.request(`/api/partner/v1/games/${game.gameId}/blocks?limit=0`, { apiKey: game.apiKey });
    expect([bad.status, bad.body.errorCode]).toEqual([400, "KS-4101"]);
  });
});
