import { z } from "@hono/zod-openapi";
import { microsToUsd, type ProtectionSettingName, type StoredSetting, settingInForce } from "@outcomes/core";
import type { JurisdictionRecord, ProtectionRecord } from "@outcomes/db";
import { TimestampSchema } from "./fields.js";

/** A jurisdiction profile (CONTRACT §16). */
export const JurisdictionSchema = z
  .object({
    code: z.string().openapi({ example: "UK-GC" }),
    name: z.string().openapi({ example: "Great Britain (UK Gambling Commission RTS)" }),
    minRoundMs: z.number().int().openapi({ example: 2500, description: "Least time between a player's round starts" }),
    maxWagerUsd: z
      .number()
      .nullable()
      .openapi({ example: null, description: "The most one spin may stake; null: no limit" }),
    sessionReminderMinutes: z.number().int().nullable().openapi({ example: 60 }),
    builtIn: z.boolean(),
  })
  .openapi("Jurisdiction");

export function presentJurisdiction(row: JurisdictionRecord): z.infer<typeof JurisdictionSchema> {
  return {
    code: row.code,
    name: row.name,
    minRoundMs: row.minRoundMs,
    maxWagerUsd: row.maxWagerMicros === null ? null : microsToUsd(row.maxWagerMicros),
    sessionReminderMinutes: row.sessionReminderMinutes,
    builtIn: row.builtIn,
  };
}

const PeriodLimits = z
  .object({ daily: z.number().nullable(), weekly: z.number().nullable(), monthly: z.number().nullable() })
  .openapi("PeriodLimitsUsd", { description: "USD per UTC day, ISO week and calendar month; null: no limit" });

const PendingChange = z
  .object({
    setting: z.string().openapi({ example: "lossLimitUsd.daily" }),
    value: z.union([z.number(), z.string(), z.null()]).openapi({ example: 20 }),
    effectiveAt: TimestampSchema,
  })
  .openapi("PendingProtectionChange");

/** A player's protection (CONTRACT §16): the settings in force, and the changes waiting their 24 h. */
export const ProtectionSchema = z
  .object({
    playerId: z.string().openapi({ example: "player-42" }),
    jurisdiction: z.string().openapi({ example: "UK-GC", description: "The player's own, else the partner's default" }),
    selfExcludedUntil: TimestampSchema.nullable(),
    coolingOffUntil: TimestampSchema.nullable(),
    lossLimitUsd: PeriodLimits,
    wagerLimitUsd: PeriodLimits,
    pendingChanges: z.array(PendingChange),
    updatedAt: TimestampSchema.nullable().openapi({ description: "null: never set" }),
  })
  .openapi("PlayerProtection");

/** Each setting's place in the answer. */
const PLACES: Record<ProtectionSettingName, string> = {
  selfExcludedUntil: "selfExcludedUntil",
  coolingOffUntil: "coolingOffUntil",
  lossDaily: "lossLimitUsd.daily",
  lossWeekly: "lossLimitUsd.weekly",
  lossMonthly: "lossLimitUsd.monthly",
  wagerDaily: "wagerLimitUsd.daily",
  wagerWeekly: "wagerLimitUsd.weekly",
  wagerMonthly: "wagerLimitUsd.monthly",
};

const isTime = (name: ProtectionSettingName) => name === "selfExcludedUntil" || name === "coolingOffUntil";

function shown(name: ProtectionSettingName, value: number | null): number | string | null {
  if (value === null) return null;
  return isTime(name) ? new Date(value).toISOString() : microsToUsd(value);
}

export function presentProtection(
  playerId: string,
  record: ProtectionRecord,
  now: number,
): z.infer<typeof ProtectionSchema> {
  const s = record.settings;
  const limit = (setting: StoredSetting) => {
    const value = settingInForce(setting, now);
    return value === null ? null : microsToUsd(value);
  };
  const time = (setting: StoredSetting) => {
    const value = settingInForce(setting, now);
    return value === null ? null : new Date(value).toISOString();
  };
  const pendingChanges = (Object.keys(PLACES) as ProtectionSettingName[]).flatMap((name) => {
    const { next, nextAt } = s[name];
    return nextAt !== null && nextAt > now
      ? [{ setting: PLACES[name], value: shown(name, next), effectiveAt: new Date(nextAt).toISOString() }]
      : [];
  });
  return {
    playerId,
    jurisdiction: record.jurisdiction ?? record.defaultJurisdiction,
    selfExcludedUntil: time(s.selfExcludedUntil),
    coolingOffUntil: time(s.coolingOffUntil),
    lossLimitUsd: { daily: limit(s.lossDaily), weekly: limit(s.lossWeekly), monthly: limit(s.lossMonthly) },
    wagerLimitUsd: { daily: limit(s.wagerDaily), weekly: limit(s.wagerWeekly), monthly: limit(s.wagerMonthly) },
    pendingChanges,
    updatedAt: record.updatedAt === null ? null : record.updatedAt.toISOString(),
  };
}
