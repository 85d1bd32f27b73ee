import type { Environment } from "@outcomes/core";
import type { TestApi } from "./api.js";
import { createSpinFixture, type FixtureSpin, insertFixtureSpins, type SpinFixture } from "./spin-rows.js";

/** Test helpers of the settlement route tests: a partner with a key, games and known spins. */
export interface SettlementWorld {
  partnerId: string;
  apiKey: string;
  fixture: SpinFixture;
  addSpins: (rows: FixtureSpin[]) => Promise<void>;
}

export async function settlementWorld(
  api: TestApi,
  environment: Environment = "sandbox",
  games = 2,
): Promise<SettlementWorld> {
  const { partnerId, apiKey } = await api.createPartner({ environment });
  const fixture = await createSpinFixture(api.database.db, { partnerId, environment, games });
  return { partnerId, apiKey, fixture, addSpins: (rows) => insertFixtureSpins(api.database.db, fixture, rows) };
}

export function operatorGenerate(api: TestApi, partnerId: string, json: unknown) {
  return api.request(`/api/admin/v1/partners/${partnerId}/settlements`, { method: "POST", json, admin: true });
}

export function operatorReissue(api: TestApi, partnerId: string, reportDate: string, json: unknown) {
  return api.request(`/api/admin/v1/partners/${partnerId}/settlements/${reportDate}/reissue`, {
    method: "POST",
    json,
    admin: true,
  });
}

/** micro-USD → USD through decimal text, independent of the service's own conversion. */
export function usd(micros: bigint): number {
  return Number(usdText(micros));
}

/** micro-USD → the exact decimal text of USD without trailing zeros (a report's `exact` amounts). */
export function usdText(micros: bigint): string {
  const sign = micros < 0n ? "-" : "";
  const abs = micros < 0n ? -micros : micros;
  const fraction = (abs % 1_000_000n).toString().padStart(6, "0").replace(/0+$/, "");
  return `${sign}${abs / 1_000_000n}${fraction ? `.${fraction}` : ""}`;
}

export const at = (iso: string) => new Date(iso);
