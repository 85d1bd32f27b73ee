export * from "./blocks.js";
export * from "./catalog.js";
export * from "./control.js";
export * from "./issued-keys.js";
export * from "./producers.js";
export * from "./redis.js";
export * from "./scheduled.js";
export * from "./webhooks.js";
