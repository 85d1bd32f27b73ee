export * from "./api-key.js";
export * from "./errors.js";
export * from "./ids.js";
export * from "./key-policy.js";
export * from "./money.js";
export * from "./outcome.js";
export * from "./partner.js";
