export * from "./api-keys.js";
export * from "./events.js";
export * from "./idempotency-keys.js";
export * from "./partners.js";
export * from "./pg-errors.js";
export * from "./players.js";
export * from "./spins.js";
export * from "./webhooks.js";
