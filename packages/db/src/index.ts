export * from "./client.js";
export * from "./migrate.js";
export * from "./replay-links.js";
export * from "./repositories/index.js";
export * from "./rollout-switch.js";
export * from "./schema/index.js";
