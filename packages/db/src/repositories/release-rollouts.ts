import { desc, eq } from "drizzle-orm";
import type { Database } from "../client.js";
import { releaseRollouts } from "../schema/release-rollouts.js";

export interface RolloutState {
  release: number;
  /** When the rollout of `release` was declared finished; null while it runs. */
  finishedAt: Date | null;
}

/** Whether the rollout of `release` has finished (docs/upgrades.md). */
export async function rolloutState(db: Database, release: number): Promise<RolloutState> {
  const [row] = await db.select().from(releaseRollouts).where(eq(releaseRollouts.release, release));
  return { release, finishedAt: row?.finishedAt ?? null };
}

/** Declares the rollout of `release` finished; once is enough, and a repeat keeps the first time. */
export async function finishRollout(db: Database, release: number): Promise<RolloutState> {
  await db.insert(releaseRollouts).values({ release }).onConflictDoNothing();
  return rolloutState(db, release);
}

/** The newest release whose rollout has finished (0: none yet). */
export async function newestFinishedRelease(db: Database): Promise<number> {
  const [row] = await db
    .select({ release: releaseRollouts.release })
    .from(releaseRollouts)
    .orderBy(desc(releaseRollouts.release))
    .limit(1);
  return row?.release ?? 0;
}
