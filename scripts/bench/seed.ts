import {
  assertValidParSheet,
  draftBlock,
  entriesTextOf,
  generateApiKey,
  newId,
  OutcomeDrawer,
  queuedItems,
  SAMPLE_PAR_SHEET,
} from "@outcomes/core";
import { apiKeys, blocks, type Database, games, parSheets, partners } from "@outcomes/db";
import type { RedisKeys } from "@outcomes/queue";
import type { Redis } from "ioredis";

export interface BenchSeed {
  apiKey: string;
  gameId: number;
  partnerId: string;
}

/** RPUSH in batches: one huge command would block Redis; one per item would take minutes. */
const PUSH_BATCH = 2000;

/**
 * A partner with a sandbox key and one game of the sample PAR sheet whose queue holds `outcomes`
 * real outcomes (drawn and sealed by the same core code the blocks worker uses), so the benchmark
 * never runs dry and measures the spin path only.
 */
export async function seedBench(
  db: Database,
  redis: Redis,
  keys: RedisKeys,
  options: { outcomes: number; blockSize: number },
): Promise<BenchSeed> {
  const partnerId = newId("ptr");
  await db.insert(partners).values({ id: partnerId, slug: `bench-${partnerId.toLowerCase()}`, name: "Benchmark" });
  const key = generateApiKey("sandbox");
  await db.insert(apiKeys).values({
    id: newId("key"),
    partnerId,
    environment: "sandbox",
    keyHash: key.hash,
    prefix: key.displayPrefix,
    expiresAt: new Date(Date.now() + 24 * 3600 * 1000),
  });
  const sheet = assertValidParSheet(SAMPLE_PAR_SHEET);
  const parSheetId = newId("par");
  await db.insert(parSheets).values({
    id: parSheetId,
    partnerId,
    environment: "sandbox",
    name: sheet.document.name,
    version: sheet.document.version,
    status: "ACTIVE",
    drawMode: sheet.drawMode,
    document: SAMPLE_PAR_SHEET,
    rtp: sheet.rtpDecimal,
    certifiedRtp: sheet.certifiedRtpDecimal,
    hitFrequency: sheet.hitFrequency,
    volatility: sheet.volatility,
  });
  const [game] = await db
    .insert(games)
    .values({
      partnerId,
      environment: "sandbox",
      parSheetId,
      name: "Bench game",
      minWagerMicros: 100_000,
      maxWagerMicros: 100_000_000,
    })
    .returning({ id: games.id });
  if (!game) throw new Error("game insert returned nothing");

  const drawer = new OutcomeDrawer(sheet);
  const queue = keys.outcomeQueue(game.id);
  for (let sequence = 1, left = options.outcomes; left > 0; sequence++, left -= options.blockSize) {
    const draft = draftBlock(drawer, drawer.drawTiers(Math.min(left, options.blockSize)));
    const [block] = await db
      .insert(blocks)
      .values({
        gameId: game.id,
        sequence,
        size: draft.size,
        entries: entriesTextOf(draft),
        commitment: draft.commitment,
      })
      .returning({ id: blocks.id });
    if (!block) throw new Error("block insert returned nothing");
    const items = queuedItems(draft, block.id);
    for (let start = 0; start < items.length; start += PUSH_BATCH) {
      await redis.rpush(queue, ...items.slice(start, start + PUSH_BATCH));
    }
  }
  return { apiKey: key.key, gameId: game.id, partnerId };
}
