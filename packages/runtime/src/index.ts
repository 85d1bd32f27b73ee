export * from "./env.js";
export * from "./logger.js";
export * from "./shutdown.js";
