import { integer, pgTable } from "drizzle-orm/pg-core";
import { at } from "./columns.js";

/**
 * One row per release whose rollout has finished: every process of the previous release is gone
 * (docs/upgrades.md). Written once by the rollout's last step (`npm run cli -- release finish`, or
 * POST /api/admin/v1/release/finish); features the previous release would misread stay off until
 * their release's row is here.
 */
export const releaseRollouts = pgTable("release_rollouts", {
  release: integer("release").primaryKey(),
  finishedAt: at("finished_at").notNull().defaultNow(),
});
