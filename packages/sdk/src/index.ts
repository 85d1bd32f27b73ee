export * from "./client.js";
export * from "./errors.js";
export * from "./fairness/index.js";
export * from "./protection.js";
export * from "./sample-par-sheet.js";
export type { FetchLike, RetryPolicy } from "./transport.js";
export * from "./types.js";
export * from "./webhook-signature.js";
