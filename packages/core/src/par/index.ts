export * from "./analyze.js";
export * from "./block.js";
export * from "./decimal.js";
export * from "./draw.js";
export * from "./entries.js";
export * from "./fairness.js";
export type { Rational } from "./rational.js";
export * from "./sample-sheet.js";
export * from "./schema.js";
