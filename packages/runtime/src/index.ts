export * from "./apart.js";
export * from "./batcher.js";
export * from "./dns.js";
export * from "./env.js";
export * from "./logger.js";
export * from "./metrics.js";
export * from "./metrics-server.js";
export * from "./shutdown.js";
