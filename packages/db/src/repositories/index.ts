export * from "./api-keys.js";
export * from "./partners.js";
export * from "./pg-errors.js";
