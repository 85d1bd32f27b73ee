/**
 * Player protection (CONTRACT §16), the pure part: which way a change of a setting goes. Lowering a
 * limit, or starting or lengthening an exclusion, protects the player more and takes effect at once;
 * raising or removing a limit, or ending an exclusion early, waits 24 hours.
 */

/** The settings a player's protection holds besides its jurisdiction, as the API names them. */
export const PROTECTION_SETTING_NAMES = [
  "selfExcludedUntil",
  "coolingOffUntil",
  "lossDaily",
  "lossWeekly",
  "lossMonthly",
  "wagerDaily",
  "wagerWeekly",
  "wagerMonthly",
] as const;
export type ProtectionSettingName = (typeof PROTECTION_SETTING_NAMES)[number];

/** How long a change that protects the player less waits before it takes effect. */
export const PROTECTION_COOLDOWN_MS = 24 * 60 * 60 * 1000;

/** `code` of a jurisdiction profile: 2..32 of A–Z, 0–9 and `-`. */
export const JURISDICTION_CODE_PATTERN = /^[A-Z0-9-]{2,32}$/;

/** The built-in profiles: operators change their figures, never delete them. */
export const BUILT_IN_JURISDICTIONS = ["NONE", "UK-GC", "DE-GLUSTV", "ON-AGCO"] as const;

/** A setting's value: micro-USD for a limit, epoch ms for an exclusion's end; null: none. */
export type SettingValue = number | null;

/**
 * Whether changing `current` (in force now) to `wanted` protects the player less and so waits 24 h.
 * A limit: null is no limit, so removing one is a raise. An exclusion: an end before the one in
 * force (null: ended now) is an early end, unless the exclusion in force is already over.
 */
export function changeWaits(
  name: ProtectionSettingName,
  current: SettingValue,
  wanted: SettingValue,
  now: number,
): boolean {
  if (current === wanted) return false;
  if (name === "selfExcludedUntil" || name === "coolingOffUntil") {
    if (current === null || current <= now) return false;
    return wanted === null || wanted < current;
  }
  if (current === null) return false;
  return wanted === null || wanted > current;
}

/** A setting as stored: the value in force, and the change waiting for its time. */
export interface StoredSetting {
  value: SettingValue;
  next: SettingValue;
  nextAt: number | null;
}

/** The value in force at `now`: the waiting change once its time has come. */
export function settingInForce(setting: StoredSetting, now: number): SettingValue {
  return setting.nextAt !== null && setting.nextAt <= now ? setting.next : setting.value;
}

/** A setting after a request for `wanted` at `now` (a change already due is folded in first). */
export function settingAfter(
  name: ProtectionSettingName,
  setting: StoredSetting,
  wanted: SettingValue,
  now: number,
): StoredSetting {
  const current = settingInForce(setting, now);
  if (changeWaits(name, current, wanted, now)) {
    // Asking again for the change already waiting keeps its time.
    if (setting.nextAt !== null && setting.nextAt > now && setting.next === wanted) return setting;
    return { value: current, next: wanted, nextAt: now + PROTECTION_COOLDOWN_MS };
  }
  return { value: wanted, next: null, nextAt: null };
}
