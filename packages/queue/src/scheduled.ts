import type { Producers } from "./producers.js";

/**
 * Operator triggers of the scheduled jobs (operator API and CLI): each queues the very job its
 * scheduler queues, so a run now is indistinguishable from the nightly one. Returns the job id.
 */
export async function runSettlementsNow(producers: Producers, reportDate?: string): Promise<string> {
  const job = await producers.add("settlement.generate", reportDate ? { reportDate } : {});
  return job.id ?? "";
}

export async function runKeyExpiryNow(producers: Producers): Promise<string> {
  const job = await producers.add("key-expiry.sweep", {});
  return job.id ?? "";
}

export async function runPartitionMaintenanceNow(producers: Producers): Promise<string> {
  const job = await producers.add("partitions.maintain", {});
  return job.id ?? "";
}
