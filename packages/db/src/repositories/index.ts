// Operations on the record: each reads or writes Postgres (a write in one transaction), checks the
// domain's rules under the rows' locks and fails with core's KS codes, which the API answers with
// their HTTP status and the CLI prints. How a row is shown as JSON is @outcomes/records' concern.
export * from "./api-keys.js";
export * from "./blocks.js";
export * from "./deliveries.js";
export * from "./delivery-attempts.js";
export * from "./delivery-operator.js";
export * from "./delivery-replay.js";
export * from "./event-dispatch.js";
export * from "./events.js";
export * from "./fairness.js";
export * from "./free-round-grants.js";
export * from "./games.js";
export * from "./idempotency-keys.js";
export * from "./key-expiry-notices.js";
export * from "./locked-transaction.js";
export * from "./paging.js";
export * from "./par-sheets.js";
export * from "./partitions.js";
export * from "./partners.js";
export * from "./pg-errors.js";
export * from "./players.js";
export * from "./proofs.js";
export * from "./record-spins.js";
export * from "./release-rollouts.js";
export * from "./replays.js";
export * from "./revealed-entries.js";
export * from "./service-secrets.js";
export * from "./settlement-operator.js";
export * from "./settlements.js";
export * from "./spin-voids.js";
export * from "./spins.js";
export * from "./sql-client.js";
export * from "./webhook-health.js";
export * from "./webhook-recovery.js";
export * from "./webhooks.js";
