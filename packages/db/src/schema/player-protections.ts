import { pgTable, primaryKey, text } from "drizzle-orm/pg-core";
import { at, environment, micros } from "./columns.js";
import { partners } from "./partners.js";

/**
 * One setting of a player's protection as it stands, and the change waiting for its time (a raise or
 * an early end waits 24 h, CONTRACT §16): `<name>` now, `<name>_next` from `<name>_next_at` on.
 * The spin statement reads the setting in force as `case when next_at <= now then next else now`.
 */
function pending<T extends string>(
  name: T,
  column: (name: string) => ReturnType<typeof micros> | ReturnType<typeof at>,
) {
  return {
    [name]: column(name),
    [`${name}_next`]: column(`${name}_next`),
    [`${name}_next_at`]: at(`${name}_next_at`),
  } as Record<T | `${T}_next` | `${T}_next_at`, ReturnType<typeof micros> | ReturnType<typeof at>>;
}

/** The settings a player's protection may change, as the API names them, by their column. */
export const PROTECTION_SETTINGS = {
  selfExcludedUntil: "self_excluded_until",
  coolingOffUntil: "cooling_off_until",
  lossDaily: "loss_daily_micros",
  lossWeekly: "loss_weekly_micros",
  lossMonthly: "loss_monthly_micros",
  wagerDaily: "wager_daily_micros",
  wagerWeekly: "wager_weekly_micros",
  wagerMonthly: "wager_monthly_micros",
} as const;

/**
 * A player's protection (CONTRACT §16), per partner, environment and the partner's player id: set
 * before or after his first spin. No row: the partner's default jurisdiction, no exclusion, no limit.
 * What the checks count (the last round, the period figures) lives on the player's row, which the
 * spin statement locks anyway.
 */
export const playerProtections = pgTable(
  "player_protections",
  {
    partnerId: text("partner_id")
      .notNull()
      .references(() => partners.id),
    environment: environment(),
    externalId: text("external_id").notNull(),
    /** null: the partner's `default_jurisdiction`. */
    jurisdiction: text("jurisdiction"),
    ...pending("self_excluded_until", at),
    ...pending("cooling_off_until", at),
    ...pending("loss_daily_micros", micros),
    ...pending("loss_weekly_micros", micros),
    ...pending("loss_monthly_micros", micros),
    ...pending("wager_daily_micros", micros),
    ...pending("wager_weekly_micros", micros),
    ...pending("wager_monthly_micros", micros),
    updatedAt: at("updated_at").notNull().defaultNow(),
  },
  (table) => [primaryKey({ columns: [table.partnerId, table.environment, table.externalId] })],
);
