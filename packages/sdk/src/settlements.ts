import { type PartnerRequests, pageQuery, segment } from "./requests.js";
import type { PageInfo, PageRequest, SettlementReport } from "./types.js";

/** `client.settlements`: daily settlement reports, provisional until their UTC day is made final. */
export function settlementRequests(api: PartnerRequests) {
  return {
    list: (page?: PageRequest) => api.get<{ reports: SettlementReport[] } & PageInfo>("/settlements", pageQuery(page)),
    get: (reportDate: string) => api.get<SettlementReport>(`/settlements/${segment(reportDate)}`),
    /** A final report only: a provisional one (its UTC day not ended, or not yet made final) is 409 KS-4305. */
    acknowledge: (reportDate: string) =>
      api.write<SettlementReport>("POST", `/settlements/${segment(reportDate)}/acknowledge`),
    /** A final report only, as `acknowledge`. */
    dispute: (reportDate: string, reason: string) =>
      api.write<SettlementReport>("POST", `/settlements/${segment(reportDate)}/dispute`, { reason }),
  };
}

export type SettlementRequests = ReturnType<typeof settlementRequests>;
