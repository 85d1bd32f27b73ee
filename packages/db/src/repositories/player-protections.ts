import {
  type Owner,
  PROTECTION_SETTING_NAMES,
  type ProtectionSettingName,
  type SettingValue,
  type StoredSetting,
  settingAfter,
} from "@outcomes/core";
import type { Database } from "../client.js";
import { PROTECTION_SETTINGS } from "../schema/player-protections.js";
import { type SqlClient, sqlClientOf } from "./sql-client.js";

/** A player's protection as stored, each setting with its waiting change. */
export interface ProtectionRecord {
  /** The player's own jurisdiction; null: the partner's default. */
  jurisdiction: string | null;
  /** The partner's `defaultJurisdiction`. */
  defaultJurisdiction: string;
  settings: Record<ProtectionSettingName, StoredSetting>;
  /** null: never set. */
  updatedAt: Date | null;
}

/** A change asked for: the settings named change, the others stay. */
export interface ProtectionChange {
  /** null: back to the partner's default; undefined: unchanged. */
  jurisdiction?: string | null;
  settings: Partial<Record<ProtectionSettingName, SettingValue>>;
}

const isTime = (name: ProtectionSettingName) => name === "selfExcludedUntil" || name === "coolingOffUntil";

const COLUMNS = PROTECTION_SETTING_NAMES.flatMap((name) => {
  const column = PROTECTION_SETTINGS[name];
  return [column, `${column}_next`, `${column}_next_at`];
});

const SELECT = `
  select pa.default_jurisdiction, pp.jurisdiction, pp.updated_at, ${COLUMNS.map((c) => `pp.${c}`).join(", ")}
  from partners pa left join player_protections pp
    on pp.partner_id = pa.id and pp.environment = $2 and pp.external_id = $3
  where pa.id = $1`;

type Row = Record<string, string | Date | null>;

const epoch = (value: string | Date | null): number | null => (value === null ? null : new Date(value).getTime());

function recordOf(row: Row): ProtectionRecord {
  const settings = Object.fromEntries(
    PROTECTION_SETTING_NAMES.map((name) => {
      const column = PROTECTION_SETTINGS[name];
      const value = (raw: string | Date | null) => (isTime(name) ? epoch(raw) : raw === null ? null : Number(raw));
      const setting: StoredSetting = {
        value: value(row[column] ?? null),
        next: value(row[`${column}_next`] ?? null),
        nextAt: epoch(row[`${column}_next_at`] ?? null),
      };
      return [name, setting];
    }),
  ) as Record<ProtectionSettingName, StoredSetting>;
  return {
    jurisdiction: (row.jurisdiction as string | null) ?? null,
    defaultJurisdiction: row.default_jurisdiction as string,
    settings,
    updatedAt: row.updated_at === null ? null : new Date(row.updated_at!),
  };
}

async function read(client: SqlClient, owner: Owner, externalId: string, lock: boolean): Promise<ProtectionRecord> {
  const [row] = await client.unsafe<Row[]>(`${SELECT}${lock ? " for update of pa" : ""}`, [
    owner.partnerId,
    owner.environment,
    externalId,
  ]);
  return recordOf(row!);
}

/** The player's protection (all unset when none was ever set; a player may have none and no spin yet). */
export function findProtection(db: Database, owner: Owner, externalId: string): Promise<ProtectionRecord> {
  return read(sqlClientOf(db), owner, externalId, false);
}

const stored = (name: ProtectionSettingName, value: SettingValue) =>
  value === null ? null : isTime(name) ? new Date(value).toISOString() : String(value);

/**
 * Applies a change at the database's clock: each setting at once or after 24 h (`settingAfter`).
 * The partner's row is locked, so two changes of one partner's players' protection apply one after
 * the other (they are rare), and the change and the read it starts from agree.
 */
export async function putProtection(
  db: Database,
  owner: Owner,
  externalId: string,
  change: ProtectionChange,
): Promise<ProtectionRecord> {
  return sqlClientOf(db).begin(async (tx) => {
    const before = await read(tx, owner, externalId, true);
    const [clock] = await tx.unsafe<{ now: Date }[]>("select clock_timestamp() as now");
    const at = new Date(clock!.now).getTime();
    const values: Array<string | null> = [];
    for (const name of PROTECTION_SETTING_NAMES) {
      const wanted = change.settings[name];
      const setting =
        wanted === undefined ? before.settings[name] : settingAfter(name, before.settings[name], wanted, at);
      values.push(stored(name, setting.value), stored(name, setting.next), stored("selfExcludedUntil", setting.nextAt));
    }
    const jurisdiction = change.jurisdiction === undefined ? before.jurisdiction : change.jurisdiction;
    const list = COLUMNS.join(", ");
    const placeholders = COLUMNS.map((_, i) => `$${i + 5}`).join(", ");
    const updates = COLUMNS.map((c) => `${c} = excluded.${c}`).join(", ");
    await tx.unsafe(
      `insert into player_protections (partner_id, environment, external_id, jurisdiction, ${list}, updated_at)
       values ($1, $2, $3, $4, ${placeholders}, clock_timestamp())
       on conflict (partner_id, environment, external_id) do update set
         jurisdiction = excluded.jurisdiction, ${updates}, updated_at = excluded.updated_at`,
      [owner.partnerId, owner.environment, externalId, jurisdiction, ...values],
    );
    return read(tx, owner, externalId, false);
  });
}

/** Whether the partner's spins need the protection checks: a default other than NONE, or any player's protection. */
export const PARTNER_PROTECTED_SQL = `(partners.default_jurisdiction <> 'NONE' or exists
  (select 1 from player_protections pp where pp.partner_id = partners.id))`;
